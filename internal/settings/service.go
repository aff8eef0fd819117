// Package settings keeps the instance's application settings: the one row
// GET/PUT /application/settings show and change, cached in every process
// and dropped from the cache when any process on the database changes it.
package settings

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Row is the settings with the row's times and version.
type Row = store.SettingsRow

// Config tunes the service.
type Config struct {
	// Initial sets a new instance's first settings from the server's
	// flags (GitLab's defaults, then these).
	Initial func(*model.ApplicationSettings)
	// Refresh is how often the cache is re-read even without a
	// notification (notifications are best effort); 0 means 30 s.
	Refresh time.Duration
	// ReadOnly is a process that writes nothing (a geo secondary): it
	// reads the row, or GitLab's defaults while there is none, and
	// refuses updates.
	ReadOnly bool
}

// Service reads and changes the application settings.
type Service struct {
	db       *store.DB
	log      *slog.Logger
	initial  func(*model.ApplicationSettings)
	refresh  time.Duration
	readOnly bool

	cur    atomic.Pointer[store.SettingsRow]
	loadMu sync.Mutex
}

// New returns the settings service.
func New(db *store.DB, log *slog.Logger, cfg Config) *Service {
	if cfg.Refresh <= 0 {
		cfg.Refresh = 30 * time.Second
	}
	return &Service{db: db, log: log, initial: cfg.Initial, refresh: cfg.Refresh, readOnly: cfg.ReadOnly}
}

// registrationPrefix starts instance, group and project registration
// tokens.
const registrationPrefix = "GR1348941"

// fresh are a new instance's settings.
func (s *Service) fresh() model.ApplicationSettings {
	st := model.DefaultApplicationSettings()
	if s.initial != nil {
		s.initial(&st)
	}
	st.RunnersRegistrationToken = auth.NewSecret(registrationPrefix, 20)
	return st
}

// Start keeps the cache current until ctx ends: it re-reads the row when
// any process announces a change (store.SettingsChannel) and every
// Refresh. The returned channel is closed when it has stopped.
func (s *Service) Start(ctx context.Context) (<-chan struct{}, error) {
	sub, err := s.db.Subscribe(store.SettingsChannel)
	if err != nil {
		return nil, err
	}
	// Loaded before the first request, so no caller waits for the row.
	if _, err := s.load(ctx); err != nil {
		sub.Close()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer sub.Close()
		tick := time.NewTicker(s.refresh)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-sub.C:
				if !ok {
					return
				}
			case <-tick.C:
			}
			if _, err := s.load(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("application settings: reload failed", "err", err)
			}
		}
	}()
	return done, nil
}

// Preload reads the row into the cache (creating it on a new instance),
// before anything asks for it.
func (s *Service) Preload(ctx context.Context) error {
	_, err := s.load(ctx)
	return err
}

// load reads the row into the cache (creating it on first use). It reads
// outside any transaction first: a service may ask for the settings
// while it holds a write transaction, and on SQLite a second one would
// wait for it forever.
func (s *Service) load(ctx context.Context) (store.SettingsRow, error) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	row, err := s.db.ApplicationSettings(ctx, nil)
	if err != nil {
		return row, err
	}
	if row.Version == 0 && row.CreatedAt.IsZero() && !s.readOnly {
		// No row yet: create it with this instance's first values.
		err = s.db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			row, err = tx.ApplicationSettings(ctx, s.fresh)
			return err
		})
		if err != nil {
			return row, err
		}
	}
	s.keep(row)
	return row, nil
}

// keep caches row unless a newer version is cached already.
func (s *Service) keep(row store.SettingsRow) {
	for {
		old := s.cur.Load()
		if old != nil && old.Version > row.Version {
			return
		}
		if s.cur.CompareAndSwap(old, &row) {
			return
		}
	}
}

// row is the cached row, read once when there is none.
func (s *Service) row(ctx context.Context) (store.SettingsRow, error) {
	if r := s.cur.Load(); r != nil {
		return *r, nil
	}
	return s.load(ctx)
}

// Current are the settings in effect (from the cache: no query once
// loaded). The lists and maps inside are shared: callers only read them.
func (s *Service) Current(ctx context.Context) (model.ApplicationSettings, error) {
	r, err := s.row(ctx)
	return r.Settings, err
}

// Get is the settings row for GET /application/settings (administrators).
func (s *Service) Get(ctx context.Context, a auth.Actor) (store.SettingsRow, error) {
	if !a.Admin() {
		return store.SettingsRow{}, model.Forbidden("")
	}
	return s.row(ctx)
}

// errReadOnly refuses a change in a process that writes nothing.
var errReadOnly = model.ForbiddenRaw("You cannot perform write operations on a read-only instance")

// maxAttempts bounds the retries of an update that lost a race.
const maxAttempts = 5

// Update applies the attributes in (keyed by the name the caller used,
// current or legacy) over the current settings, validates the whole as
// GitLab does and saves it: a wrong type is a 400 naming the parameter,
// a failed rule a 400 keyed by attribute, and either leaves every value
// as it was. Another writer in between is retried over its result, so no
// change is lost.
func (s *Service) Update(ctx context.Context, a auth.Actor, in map[string]model.SettingInput) (store.SettingsRow, error) {
	if !a.Admin() {
		return store.SettingsRow{}, model.Forbidden("")
	}
	if s.readOnly {
		return store.SettingsRow{}, errReadOnly
	}
	names, err := checkInput(in)
	if err != nil {
		return store.SettingsRow{}, err
	}
	return s.save(ctx, func(next *model.ApplicationSettings) error {
		var bad []string
		for _, name := range names {
			if err := next.Set(name, in[name]); err != nil {
				if model.KindOf(err) == model.KindInvalid {
					return err
				}
				var me *model.Error
				if !errors.As(err, &me) {
					return err
				}
				bad = append(bad, me.Message)
			}
		}
		if len(bad) > 0 {
			return model.Param(strings.Join(bad, ", "))
		}
		next.Normalize()
		return next.Validate(outsideChecks(*next))
	})
}

// save applies change to a copy of the settings, read under the row's
// lock, and writes the copy over the version it read; a lost race (which
// the lock should prevent) is applied again over the winner's result.
func (s *Service) save(ctx context.Context, change func(next *model.ApplicationSettings) error) (store.SettingsRow, error) {
	for attempt := 1; ; attempt++ {
		var saved store.SettingsRow
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.LockApplicationSettings(ctx); err != nil {
				return err
			}
			row, err := tx.ApplicationSettings(ctx, s.fresh)
			if err != nil {
				return err
			}
			next := row.Settings.Clone()
			if err := change(&next); err != nil {
				return err
			}
			if err := tx.SaveApplicationSettings(ctx, next, row.Version); err != nil {
				return err
			}
			saved = row
			saved.Settings, saved.Version, saved.UpdatedAt = next, row.Version+1, tx.Now()
			return nil
		})
		if model.KindOf(err) == model.KindConflict && attempt < maxAttempts {
			continue
		}
		if err != nil {
			return store.SettingsRow{}, err
		}
		s.keep(saved)
		return saved, nil
	}
}

// outsideChecks are the rules the model cannot check itself.
func outsideChecks(st model.ApplicationSettings) model.FieldErrors {
	var f model.FieldErrors
	if p := st.DefaultBranchName; p != nil && strings.TrimSpace(*p) != "" && !git.ValidRefName(strings.TrimSpace(*p)) {
		f.Add("default_branch_name", "is invalid")
	}
	return f
}

// requires are Grape's "given X is true, Y must be sent" pairs of the
// settings API.
var requires = []struct {
	given string
	needs []string
}{
	{"akismet_enabled", []string{"akismet_api_key"}},
	{"asset_proxy_enabled", []string{"asset_proxy_url", "asset_proxy_secret_key"}},
	{"domain_denylist_enabled", []string{"domain_denylist"}},
	{"eks_integration_enabled", []string{"eks_account_id", "eks_access_key_id", "eks_secret_access_key"}},
	{"enforce_terms", []string{"terms"}},
	{"external_authorization_service_enabled", []string{"external_authorization_service_url",
		"external_authorization_service_default_label", "external_authorization_service_timeout"}},
	{"plantuml_enabled", []string{"plantuml_url"}},
	{"kroki_enabled", []string{"kroki_url"}},
	{"require_two_factor_authentication", []string{"two_factor_grace_period"}},
}

// checkInput orders the sent attributes (legacy names first, so the
// current name wins when both are sent) and checks Grape's rules: at
// least one attribute, and the "requires" pairs.
func checkInput(in map[string]model.SettingInput) ([]string, error) {
	canonical := map[string]bool{}
	var names []string
	for name := range in {
		a, ok := model.SettingAttributeNamed(name)
		if !ok {
			continue // Grape ignores undeclared parameters
		}
		canonical[a.Name] = true
		names = append(names, name)
	}
	if len(names) == 0 {
		all := make([]string, 0, len(model.SettingAttributes()))
		for _, a := range model.SettingAttributes() {
			all = append(all, a.Name)
		}
		return nil, model.Param(strings.Join(all, ", ") + " are missing, at least one parameter must be provided")
	}
	sort.Slice(names, func(i, j int) bool {
		_, ai := model.SettingAliases[names[i]]
		_, aj := model.SettingAliases[names[j]]
		if ai != aj {
			return ai
		}
		return names[i] < names[j]
	})
	var missing []string
	for _, r := range requires {
		if !sentTrue(in, r.given) {
			continue
		}
		for _, need := range r.needs {
			if !canonical[need] && !slices.Contains(missing, need) {
				missing = append(missing, need)
			}
		}
	}
	if sentText(in, "external_auth_client_cert") && !canonical["external_auth_client_key"] {
		missing = append(missing, "external_auth_client_key")
	}
	if len(missing) > 0 {
		for i := range missing {
			missing[i] += " is missing"
		}
		return nil, model.Param(strings.Join(missing, ", "))
	}
	return names, nil
}

// sentTrue reports that attribute name (under any of its names) was sent
// as true.
func sentTrue(in map[string]model.SettingInput, name string) bool {
	for key, v := range in {
		a, ok := model.SettingAttributeNamed(key)
		if ok && a.Name == name && !v.Null && len(v.Values) == 1 {
			switch strings.ToLower(strings.TrimSpace(v.Values[0])) {
			case "true", "t", "1", "yes", "y", "on":
				return true
			}
		}
	}
	return false
}

// sentText reports that attribute name was sent with a non-blank value.
func sentText(in map[string]model.SettingInput, name string) bool {
	v, ok := in[name]
	return ok && !v.Null && len(v.Values) > 0 && strings.TrimSpace(v.Values[0]) != ""
}

// ResetRegistrationToken gives the instance a new runners registration
// token (administrators).
func (s *Service) ResetRegistrationToken(ctx context.Context, a auth.Actor) (string, error) {
	if !a.Admin() {
		return "", model.Forbidden("")
	}
	if s.readOnly {
		return "", errReadOnly
	}
	token := auth.NewSecret(registrationPrefix, 20)
	_, err := s.save(ctx, func(next *model.ApplicationSettings) error {
		next.RunnersRegistrationToken = token
		return nil
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// SyncStorages makes repository_storages name the storages this process
// is configured with (sorted), when it names others: a storage added to
// the configuration joins with weight 0, one removed leaves
// repository_storages_weighted, and when no weight is left above zero
// "default" gets 100. The first start seeds both from the flags; this
// keeps them true when the configuration changes later.
func (s *Service) SyncStorages(ctx context.Context, names []string) error {
	if s.readOnly {
		return nil
	}
	names = slices.Sorted(slices.Values(names))
	cur, err := s.Current(ctx)
	if err != nil {
		return err
	}
	if slices.Equal(slices.Sorted(slices.Values(cur.RepositoryStorages)), names) {
		return nil
	}
	_, err = s.save(ctx, func(next *model.ApplicationSettings) error {
		weights := map[string]int64{}
		positive := false
		for _, n := range names {
			weights[n] = next.RepositoryStoragesWeighted[n]
			positive = positive || weights[n] > 0
		}
		if !positive && slices.Contains(names, "default") {
			weights["default"] = 100
		}
		next.RepositoryStorages, next.RepositoryStoragesWeighted = names, weights
		return nil
	})
	return err
}
