package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"quarry/internal/apitest"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

// benchProjects is the size of the project table the list benchmarks use.
const benchProjects = 100_000

var projectsBench seeded

// projectsBenchServer is a server with benchProjects public projects in
// root's namespace, every tenth with the topic "tenth".
func projectsBenchServer(b *testing.B) *apitest.Server {
	return projectsBench.get(b, fmt.Sprintf("%d projects", benchProjects), func(ctx context.Context, s *apitest.Server, tx *store.Tx) error {
		root, err := tx.UserByUsername(ctx, "root")
		if err != nil {
			return err
		}
		ns, err := tx.NamespaceByID(ctx, root.NamespaceID)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		for i := 0; i < benchProjects; i++ {
			p := model.Project{NamespaceID: ns.ID, Namespace: ns, CreatorID: root.ID, Name: fmt.Sprintf("project %06d", i),
				Path: fmt.Sprintf("project-%06d", i), Description: "a project", Visibility: model.Public, DefaultBranch: "main",
				RepositoryStorage: "default", DiskPath: gitrepo.HashedPath("", int64(i+1)), EmptyRepo: true, ImportStatus: "none",
				IssuesAccessLevel: "enabled", MergeRequestsAccessLevel: "enabled", Settings: model.DefaultProjectSettings(),
				LastActivityAt: now, CreatedAt: now.Add(time.Duration(i) * time.Millisecond), UpdatedAt: now}
			if err := tx.CreateProject(ctx, &p); err != nil {
				return err
			}
			if i%10 == 0 {
				if err := tx.SetProjectTopics(ctx, p.ID, []string{"tenth"}); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// BenchmarkProjectsList lists projects as a signed-in user (the full
// entity with permissions), 20 per page.
func BenchmarkProjectsList(b *testing.B) {
	s := projectsBenchServer(b)
	token := s.RootToken
	base := s.URL + "/api/v4/projects?per_page=20"
	keysetDeep := walkKeyset(b, base+"&pagination=keyset&order_by=id&sort=desc", token, 2000)
	cases := []struct{ name, url string }{
		{"offset/page=1", base + "&page=1"},
		{"offset/page=40", base + "&page=40"},
		{"offset/page=2000", base + "&page=2000"},
		{"keyset/page=1", base + "&pagination=keyset&order_by=id&sort=desc"},
		{"keyset/page=2001", keysetDeep},
		{"simple/page=1", base + "&simple=true"},
		{"search", base + "&search=project+09999"},
		{"topic", base + "&topic=tenth"},
		{"get", s.URL + "/api/v4/projects/50000"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetParallelism(8)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					benchGet(b, c.url, token)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
