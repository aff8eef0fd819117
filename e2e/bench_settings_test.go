package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"quarry/internal/apitest"
	"quarry/internal/store"
)

// BenchmarkSettings measures requests that read the application settings
// once the process has them cached: GET /application/settings and
// POST /projects (which reads the default visibility, branch, limits and
// protection). Reported besides the time: the database statements a
// request sends (stmts/op), next to those of GET /version, which reads
// no settings — the same authentication, so any difference would be the
// settings' own queries.
func BenchmarkSettings(b *testing.B) {
	s := apitest.Start(&keepAlive{b}, benchTarget(b))
	defer s.Stop()
	// Warm: the first read loads the row.
	s.Get(b, "/application/settings", s.RootToken).Want(b, http.StatusOK)
	perRequest := func(b *testing.B, do func(i int)) {
		b.ReportAllocs()
		before := store.Statements()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			do(i)
		}
		b.StopTimer()
		b.ReportMetric(float64(store.Statements()-before)/float64(b.N), "stmts/op")
	}
	b.Run("version", func(b *testing.B) {
		perRequest(b, func(int) { s.Get(b, "/version", s.RootToken).Want(b, http.StatusOK) })
	})
	b.Run("get-settings", func(b *testing.B) {
		perRequest(b, func(int) { s.Get(b, "/application/settings", s.RootToken).Want(b, http.StatusOK) })
	})
	round := 0
	b.Run("create-project", func(b *testing.B) {
		round++
		perRequest(b, func(i int) {
			s.Do(b, apitest.Request{Method: "POST", Path: "/projects", Token: s.RootToken,
				JSON: map[string]any{"name": fmt.Sprintf("bench-%d-%d", round, i)}}).Want(b, http.StatusCreated)
		})
	})
}
