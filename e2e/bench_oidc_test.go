package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// BenchmarkOIDCJobRequest measures POST /jobs/request handing out a
// pending job (the claim and the payload), for jobs without ID tokens
// and with two (two claim sets, two RS256 signatures, the signing keys
// read once per token). Each pipeline holds 200 jobs; a new one is made,
// off the clock, when they run out.
func BenchmarkOIDCJobRequest(b *testing.B) {
	for _, tokens := range []int{0, 2} {
		b.Run(fmt.Sprintf("tokens=%d", tokens), func(b *testing.B) { benchOIDCRequest(b, tokens) })
	}
}

func benchOIDCRequest(b *testing.B, tokens int) {
	s := apitest.Start(&keepAlive{b}, benchTarget(b), func(c *config) { c.RunnerLongPoll = 0 })
	defer s.Stop()
	owner := apitest.User{ID: s.RootID(b), Username: "root", Token: s.RootToken}
	ci := "job:\n  parallel: 200\n  script: [\"true\"]\n"
	if tokens == 2 {
		ci += "  id_tokens:\n    VAULT_ID_TOKEN: {aud: https://vault.example}\n    AWS_ID_TOKEN: {aud: [sts.amazonaws.com, $CI_SERVER_URL]}\n"
	}
	project := newBenchProject(b, s, owner, map[string]string{".gitlab-ci.yml": ci})
	var runner struct{ Token string }
	s.Do(b, apitest.Request{Method: "POST", Path: "/user/runners", Token: s.RootToken,
		JSON: map[string]any{"runner_type": "project_type", "project_id": project}}).Want(b, http.StatusCreated).JSON(b, &runner)
	body, _ := json.Marshal(map[string]any{"token": runner.Token,
		"info": map[string]any{"features": map[string]bool{"upload_multiple_artifacts": true}}})
	client := &http.Client{Timeout: 30 * time.Second}
	request := func() (int, []byte) {
		res, err := client.Post(s.URL+"/api/v4/jobs/request", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return res.StatusCode, out
	}
	// The push made the first pipeline; wait until its jobs are pending.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var jobs []jobJSON
		s.Get(b, fmt.Sprintf("/projects/%d/jobs?scope=pending", project), s.RootToken).JSON(b, &jobs)
		if len(jobs) > 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("no pending jobs")
		}
	}
	left := 200
	checked := false
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if left == 0 {
			b.StopTimer()
			s.Do(b, apitest.Request{Method: "POST", Path: fmt.Sprintf("/projects/%d/pipeline", project), Token: s.RootToken,
				JSON: map[string]any{"ref": "main"}}).Want(b, http.StatusCreated)
			left = 200
			b.StartTimer()
		}
		status, payload := request()
		if status != http.StatusCreated {
			b.Fatalf("jobs/request: %d %s", status, payload)
		}
		left--
		if !checked {
			checked = true
			var p struct{ Variables []struct{ Key, Value string } }
			if err := json.Unmarshal(payload, &p); err != nil {
				b.Fatal(err)
			}
			n := 0
			for _, v := range p.Variables {
				if v.Key == "VAULT_ID_TOKEN" || v.Key == "AWS_ID_TOKEN" {
					n++
				}
			}
			if n != tokens {
				b.Fatalf("payload has %d tokens; want %d", n, tokens)
			}
		}
	}
}
