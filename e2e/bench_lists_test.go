package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// listsBench is a server for the list benchmarks (issue 27): 1,000 users
// and public projects (every tenth with topics), 100 groups, and one
// project with 200 members, 200 merge requests (two assignees, a
// reviewer, labels) and 1,000 pipelines of 5 jobs. lists20 has 20
// projects only (19 and the one the lists' project is).
var listsBench, lists20Bench struct {
	once    sync.Once
	s       *apitest.Server
	project int64
	err     error
}

func listsServer(b *testing.B, projects, users, groups, members, mrs, pipelines int, sv *struct {
	once    sync.Once
	s       *apitest.Server
	project int64
	err     error
}) (*apitest.Server, int64) {
	sv.once.Do(func() {
		target := storetest.Target{Name: "sqlite"}
		if os.Getenv("QUARRY_BENCH_POSTGRES") != "" {
			target = storetest.Target{Name: "postgres", DatabaseURL: storetest.NewPostgresDatabase(&keepAlive{b})}
		}
		var opts []apitest.Option
		if v := os.Getenv("QUARRY_BENCH_ENTITY_CACHE_BYTES"); v != "" { // 0: the entity cache off
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			opts = append(opts, func(c *config) { c.EntityCacheBytes = n })
		}
		s := apitest.Start(&keepAlive{b}, target, opts...)
		start := time.Now()
		ctx := context.Background()
		owner := apitest.User{ID: s.RootID(b), Username: "root", Token: s.RootToken}
		project := newBenchProject(b, s, owner, map[string]string{"a.txt": "a\n"})
		var br struct {
			Commit struct{ ID string } `json:"commit"`
		}
		s.Get(b, fmt.Sprintf("/projects/%d/repository/branches/main", project), s.RootToken).Want(b, http.StatusOK).JSON(b, &br)
		sha := br.Commit.ID
		for i := 0; i < groups; i++ {
			s.Do(b, apitest.Request{Method: "POST", Path: "/groups", Token: s.RootToken, JSON: map[string]any{"name": fmt.Sprintf("group %04d", i),
				"path": fmt.Sprintf("group-%04d", i), "visibility": "public"}}).Want(b, http.StatusCreated)
		}
		var userIDs []int64
		sv.err = s.App.DB.InTx(ctx, func(tx *store.Tx) error {
			root, err := tx.UserByUsername(ctx, "root")
			if err != nil {
				return err
			}
			ns, err := tx.NamespaceByID(ctx, root.NamespaceID)
			if err != nil {
				return err
			}
			now := time.Now().UTC()
			for i := 0; i < users; i++ {
				u := model.User{Username: fmt.Sprintf("user%06d", i), Email: fmt.Sprintf("user%06d@example.com", i),
					Name: fmt.Sprintf("User %06d", i), State: model.UserActive, Type: model.UserHuman,
					CanCreateGroup: true, ProjectsLimit: 100000, ThemeID: 1, ColorSchemeID: 1, CreatedAt: now, UpdatedAt: now}
				if err := tx.CreateUser(ctx, &u); err != nil {
					return err
				}
				userIDs = append(userIDs, u.ID)
			}
			for i := 0; i < projects; i++ {
				p := model.Project{NamespaceID: ns.ID, Namespace: ns, CreatorID: root.ID, Name: fmt.Sprintf("project %06d", i),
					Path: fmt.Sprintf("project-%06d", i), Description: "a project", Visibility: model.Public, DefaultBranch: "main",
					RepositoryStorage: "default", DiskPath: gitrepo.HashedPath("", int64(1000000+i)), EmptyRepo: true, ImportStatus: "none",
					IssuesAccessLevel: "enabled", MergeRequestsAccessLevel: "enabled", Settings: model.DefaultProjectSettings(),
					LastActivityAt: now, CreatedAt: now.Add(time.Duration(i) * time.Millisecond), UpdatedAt: now}
				if err := tx.CreateProject(ctx, &p); err != nil {
					return err
				}
				if i%10 == 0 {
					if err := tx.SetProjectTopics(ctx, p.ID, []string{"tenth", "bench"}); err != nil {
						return err
					}
				}
			}
			for i := 0; i < members && i < len(userIDs); i++ {
				if err := tx.AddMember(ctx, model.SourceProject, project, userIDs[i], model.Developer, root.ID, now.UnixMicro()); err != nil {
					return err
				}
			}
			if err := tx.RefreshAuthorizations(ctx, userIDs[:min(members, len(userIDs))]...); err != nil {
				return err
			}
			for i := 0; i < mrs; i++ {
				m := model.MergeRequest{TargetProjectID: project, SourceProjectID: project, SourceBranch: fmt.Sprintf("mr-%04d", i),
					TargetBranch: "main", Title: fmt.Sprintf("merge request %d", i), State: "opened", AuthorID: root.ID,
					AssigneeIDs: []int64{userIDs[i%members], userIDs[(i+1)%members]}, ReviewerIDs: []int64{userIDs[(i+2)%members]},
					Labels: []string{"bug", fmt.Sprintf("l%d", i%5)}, HeadSHA: sha, BaseSHA: sha, StartSHA: sha, MergeStatus: "can_be_merged"}
				if err := tx.CreateMergeRequest(ctx, &m); err != nil {
					return err
				}
			}
			statuses := []model.CIStatus{model.StatusSuccess, model.StatusFailed, model.StatusCanceled, model.StatusSkipped}
			for i := 0; i < pipelines; i++ {
				pl := model.Pipeline{ProjectID: project, Ref: "main", SHA: sha, BeforeSHA: model.ZeroRef, Source: model.SourcePush,
					Status: statuses[i%len(statuses)], UserID: root.ID}
				if err := tx.CreatePipeline(ctx, &pl); err != nil {
					return err
				}
				for k := 0; k < 5; k++ {
					j := model.Job{ProjectID: project, PipelineID: pl.ID, Kind: model.JobBuild, Name: fmt.Sprintf("job %d", k),
						Stage: "test", Status: statuses[(i+k)%len(statuses)], When: model.WhenOnSuccess, UserID: root.ID, Ref: "main", SHA: sha}
					if err := tx.CreateJob(ctx, &j); err != nil {
						return err
					}
				}
			}
			return nil
		})
		sv.s, sv.project = s, project
		fmt.Fprintf(os.Stderr, "seeded the lists (%d projects) on %s in %s\n", projects, target.Name, time.Since(start).Round(time.Millisecond))
	})
	if sv.err != nil {
		b.Fatal(sv.err)
	}
	return sv.s, sv.project
}

// processCPU is the CPU time this process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLists reads a page of 20 of each list as the administrator, 8
// clients per core. -cpuprofile shows where a list's time goes.
func BenchmarkLists(b *testing.B) {
	s, project := listsServer(b, 1000, 1000, 100, 200, 200, 1000, &listsBench)
	s20, _ := listsServer(b, 19, 30, 0, 20, 0, 0, &lists20Bench)
	p := fmt.Sprintf("%s/api/v4/projects/%d", s.URL, project)
	cases := []benchShape{
		{"projects20/page=1", s20.URL + "/api/v4/projects?per_page=20", s20.RootToken},
		{"projects/page=1", s.URL + "/api/v4/projects?per_page=20", s.RootToken},
		{"projects/page=40", s.URL + "/api/v4/projects?per_page=20&page=40", s.RootToken},
		{"users/page=1", s.URL + "/api/v4/users?per_page=20", s.RootToken},
		{"users/page=40", s.URL + "/api/v4/users?per_page=20&page=40", s.RootToken},
		{"groups/page=1", s.URL + "/api/v4/groups?per_page=20", s.RootToken},
		{"members/page=1", p + "/members?per_page=20", s.RootToken},
		{"merge_requests/page=1", p + "/merge_requests?per_page=20", s.RootToken},
		{"pipelines/page=1", p + "/pipelines?per_page=20", s.RootToken},
		{"pipelines/page=40", p + "/pipelines?per_page=20&page=40", s.RootToken},
		{"jobs/page=1", p + "/jobs?per_page=20", s.RootToken},
		{"jobs/page=200", p + "/jobs?per_page=20&page=200", s.RootToken},
	}
	benchShapes(b, cases)
}

// benchShape is one GET a benchmark reads, as whom.
type benchShape struct{ name, url, token string }

// benchShapes reads each shape from 8 clients per core, reporting req/s,
// statements and the CPU time per request (server and client, one
// process: what a read costs whatever else the machine runs).
func benchShapes(b *testing.B, cases []benchShape) {
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetParallelism(8)
			b.ReportAllocs()
			before, cpu := store.Statements(), processCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					benchGet(b, c.url, c.token)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			b.ReportMetric(float64(store.Statements()-before)/float64(b.N), "stmts/op")
			b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
