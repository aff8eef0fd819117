package e2e

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quarry/internal/apitest"
)

// heapPeak samples the process's heap while it runs and reports the
// highest live heap seen above the one at its start.
type heapPeak struct {
	base uint64
	peak atomic.Uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

func startHeapPeak() *heapPeak {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h := &heapPeak{base: m.HeapAlloc, stop: make(chan struct{})}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > h.peak.Load() {
					h.peak.Store(m.HeapAlloc)
				}
			}
		}
	}()
	return h
}

// RetainedMiB is the live heap after a collection, above the one at the
// start, in MiB: what a run left behind (call it once the run is over).
func (h *heapPeak) RetainedMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.HeapAlloc < h.base {
		return 0
	}
	return float64(m.HeapAlloc-h.base) / (1 << 20)
}

// MiB is the peak above the start, in MiB.
func (h *heapPeak) MiB() float64 {
	close(h.stop)
	h.wg.Wait()
	p := h.peak.Load()
	if p < h.base {
		return 0
	}
	return float64(p-h.base) / (1 << 20)
}

// BenchmarkGroupExportImport exports and imports a group of 100
// subgroups holding 5,000 labels in all (QUARRY_BENCH_GROUP_LABELS sets
// the labels per group, 50 by default): the import of a GitLab-format
// archive, then the export of the group it made, then the import of
// that export. It reports seconds for each and the peak heap above the
// start while each runs (the server runs in this process), and the
// archive's size. QUARRY_BENCH_POSTGRES=1 with QUARRY_TEST_DATABASE_URL
// runs it on PostgreSQL.
func BenchmarkGroupExportImport(b *testing.B) {
	const subgroups = 100
	perGroup := 50
	if v, err := strconv.Atoi(os.Getenv("QUARRY_BENCH_GROUP_LABELS")); err == nil && v > 0 {
		perGroup = v
	}
	archive := gxBigArchive(b, subgroups, perGroup)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := apitest.Start(&keepAlive{b}, benchTarget(b), func(c *config) { c.LogLevel = "error" })
		gxUnlimited(b, s)
		b.StartTimer()

		h := startHeapPeak()
		start := time.Now()
		id, st := gxImport(b, s, s.RootToken, "Bench", "bench", 0, archive)
		importSecs, importHeap := time.Since(start).Seconds(), h.MiB()
		if st.ImportStatus != "finished" || st.ImportStatistics.Imported["labels"] != (subgroups+1)*perGroup {
			b.Fatalf("import: %+v %+v", st, st.ImportStatistics)
		}

		h = startHeapPeak()
		start = time.Now()
		out, _ := gxExport(b, s, s.RootToken, id)
		exportSecs, exportHeap := time.Since(start).Seconds(), h.MiB()

		h = startHeapPeak()
		start = time.Now()
		_, st = gxImport(b, s, s.RootToken, "Bench again", "bench2", 0, out)
		againSecs, againHeap := time.Since(start).Seconds(), h.MiB()
		if st.ImportStatus != "finished" || st.ImportStatistics.Imported["labels"] != (subgroups+1)*perGroup {
			b.Fatalf("import of the export: %+v %+v", st, st.ImportStatistics)
		}
		b.StopTimer()
		b.ReportMetric(importSecs, "import-s")
		b.ReportMetric(importHeap, "import-heap-MiB")
		b.ReportMetric(exportSecs, "export-s")
		b.ReportMetric(exportHeap, "export-heap-MiB")
		b.ReportMetric(againSecs, "reimport-s")
		b.ReportMetric(againHeap, "reimport-heap-MiB")
		b.ReportMetric(float64(len(out))/1024, "archive-KiB")
		b.Logf("%d groups, %d labels: import %.2fs (heap +%.1f MiB), export %.2fs (+%.1f MiB, %d KiB), import of it %.2fs (+%.1f MiB)",
			subgroups+1, (subgroups+1)*perGroup, importSecs, importHeap, exportSecs, exportHeap, len(out)/1024, againSecs, againHeap)
		s.Stop()
	}
}
