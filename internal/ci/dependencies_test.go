package ci

import (
	"testing"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
)

func TestArchiveLost(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	for _, tc := range []struct {
		name      string
		st        store.ArchiveState
		available bool
		want      bool
	}{
		{name: "never stored an archive", want: false},
		{name: "archive there, no expiry", available: true, want: false},
		{name: "archive there, expiring later", st: store.ArchiveState{ExpireAt: &future}, available: true, want: false},
		{name: "removed before its time", st: store.ArchiveState{ExpireAt: &future}, want: false},
		{name: "expired, removed by the sweep", st: store.ArchiveState{ExpireAt: &past}, want: true},
		{name: "expiring right now", st: store.ArchiveState{ExpireAt: &now}, want: true},
		{name: "expired but kept (latest of its ref)", st: store.ArchiveState{ExpireAt: &past}, available: true, want: false},
		{name: "erased", st: store.ArchiveState{ErasedAt: &past}, want: true},
		{name: "erased, expiry later", st: store.ArchiveState{ErasedAt: &past, ExpireAt: &future}, want: true},
	} {
		if got := archiveLost(tc.st, tc.available, now); got != tc.want {
			t.Errorf("%s: archiveLost = %v; want %v", tc.name, got, tc.want)
		}
	}
}

func TestArchiveAvailable(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Second)
	for _, tc := range []struct {
		a    model.Artifact
		want bool
	}{
		{model.Artifact{FileType: "archive"}, true},
		{model.Artifact{FileType: "archive", ExpireAt: &future}, true},
		{model.Artifact{FileType: "archive", ExpireAt: &past}, false},
		{model.Artifact{FileType: "archive", ExpireAt: &now}, false},
		{model.Artifact{FileType: "junit"}, false},
	} {
		if got := archiveAvailable(tc.a, now); got != tc.want {
			t.Errorf("archiveAvailable(%s, %v) = %v; want %v", tc.a.FileType, tc.a.ExpireAt, got, tc.want)
		}
	}
}
