package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// seed fills a running server through its API with the data set the
// performance figures are measured on: users, public projects (every tenth
// with topics), and one project with merge requests, each from a branch
// of its own with one commit.
//
//	go run ./tools/load seed -token $TOKEN -users 1000 -projects 1000 -mrs 200 http://127.0.0.1:8080
func seed(args []string) {
	fs := flag.NewFlagSet("seed", flag.ExitOnError)
	token := fs.String("token", "", "an administrator's PRIVATE-TOKEN")
	users := fs.Int("users", 1000, "users to make")
	projects := fs.Int("projects", 1000, "public projects to make")
	mrs := fs.Int("mrs", 200, "merge requests to make in one project")
	clients := fs.Int("c", 8, "requests at once")
	_ = fs.Parse(args)
	if fs.NArg() != 1 || *token == "" {
		fmt.Fprintln(os.Stderr, "usage: load seed -token T [-users N] [-projects N] [-mrs N] URL")
		os.Exit(2)
	}
	api := &seedAPI{base: strings.TrimSuffix(fs.Arg(0), "/") + "/api/v4", token: *token}
	start := time.Now()
	run := func(what string, n int, one func(i int) error) {
		var wg sync.WaitGroup
		work := make(chan int)
		var mu sync.Mutex
		var first error
		for range *clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					if err := one(i); err != nil {
						mu.Lock()
						if first == nil {
							first = err
						}
						mu.Unlock()
					}
				}
			}()
		}
		for i := range n {
			work <- i
		}
		close(work)
		wg.Wait()
		if first != nil {
			fmt.Fprintf(os.Stderr, "seed %s: %v\n", what, first)
			os.Exit(1)
		}
		fmt.Printf("%d %s (%s)\n", n, what, time.Since(start).Round(time.Millisecond))
	}
	stamp := time.Now().Unix()
	run("users", *users, func(i int) error {
		name := fmt.Sprintf("seed%d-%d", stamp, i)
		return api.do("POST", "/users", map[string]any{"username": name, "name": "Seed " + name,
			"email": name + "@example.com", "password": "seed-password-" + name, "skip_confirmation": true}, nil)
	})
	run("projects", *projects, func(i int) error {
		in := map[string]any{"name": fmt.Sprintf("seed-%d-%d", stamp, i), "visibility": "public"}
		if i%10 == 0 {
			in["topics"] = []string{"go", fmt.Sprintf("topic-%d", i%7)}
		}
		return api.do("POST", "/projects", in, nil)
	})
	if *mrs == 0 {
		return
	}
	var p struct{ ID int64 }
	if err := api.do("POST", "/projects", map[string]any{"name": fmt.Sprintf("seed-mrs-%d", stamp),
		"visibility": "public", "initialize_with_readme": true}, &p); err != nil {
		fmt.Fprintf(os.Stderr, "seed: merge request project: %v\n", err)
		os.Exit(1)
	}
	run("merge requests", *mrs, func(i int) error {
		branch := fmt.Sprintf("topic-%d", i)
		if err := api.do("POST", fmt.Sprintf("/projects/%d/repository/commits", p.ID), map[string]any{
			"branch": branch, "start_branch": "main", "commit_message": "change " + branch,
			"actions": []map[string]any{{"action": "create", "file_path": branch + ".txt", "content": branch + "\n"}},
		}, nil); err != nil {
			return err
		}
		return api.do("POST", fmt.Sprintf("/projects/%d/merge_requests", p.ID), map[string]any{
			"source_branch": branch, "target_branch": "main", "title": "Change " + branch}, nil)
	})
	fmt.Printf("merge requests in project %d\n", p.ID)
}

type seedAPI struct {
	base, token string
}

// do sends one request and decodes its answer into out (when not nil);
// anything but a 2xx is an error with the answer's start.
func (a *seedAPI) do(method, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(method, a.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("PRIVATE-TOKEN", a.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
