package app

import (
	"net/url"
	"sort"
	"time"

	"quarry/internal/config"
	"quarry/internal/model"
)

// initialSettings seed a new instance's application settings from the
// server's flags: the token prefix, the deletion delay, the default
// branch, the storages and the host of the external URL. From then on
// the settings API changes them.
func initialSettings(cfg config.Config, storages map[string]string, st *model.ApplicationSettings) {
	if cfg.TokenPrefix != "" {
		st.PersonalAccessTokenPrefix = model.Ptr(cfg.TokenPrefix)
	}
	if cfg.DeletionDelay > 0 {
		st.DelayedProjectDeletion, st.DelayedGroupDeletion = true, true
		days := int64((cfg.DeletionDelay + 24*time.Hour - 1) / (24 * time.Hour))
		st.DeletionAdjournedPeriod = min(max(days, 1), 90)
	}
	if cfg.DefaultBranch != "" && cfg.DefaultBranch != "main" {
		st.DefaultBranchName = model.Ptr(cfg.DefaultBranch)
	}
	if len(storages) > 0 {
		names := make([]string, 0, len(storages))
		for name := range storages {
			names = append(names, name)
		}
		sort.Strings(names)
		st.RepositoryStorages = names
		st.RepositoryStoragesWeighted = map[string]int64{}
		for _, name := range names {
			if name == "default" || len(names) == 1 {
				st.RepositoryStoragesWeighted[name] = 100
			} else {
				st.RepositoryStoragesWeighted[name] = 0
			}
		}
	}
	if u, err := url.Parse(cfg.ExternalURL); err == nil && u.Hostname() != "" {
		st.CommitEmailHostname = "users.noreply." + u.Hostname()
	}
}
