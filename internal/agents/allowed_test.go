package agents_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"quarry/internal/agents"
	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/git/gittest"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/storetest"
)

// world is a database and a storage of real repositories.
type world struct {
	db       *store.DB
	root     string
	storages *gitrepo.Storages
	svc      *agents.Service
}

func newWorld(t *testing.T, target storetest.Target) *world {
	t.Helper()
	db := storetest.Open(t, target, "")
	runner, err := git.NewRunner("", filepath.Join(t.TempDir(), "git-home"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	storages, err := gitrepo.NewStorages(runner, map[string]string{"default": root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(storages.Close)
	return &world{db: db, root: root, storages: storages,
		svc: agents.New(db, nil, storages, slog.New(slog.NewTextHandler(io.Discard, nil)))}
}

// commit writes files on the project's main branch (making its
// repository when it has none).
func (w *world) commit(t *testing.T, p model.Project, files gittest.Files, opts ...gittest.CommitOption) string {
	t.Helper()
	repo := filepath.Join(w.root, p.DiskPath)
	if _, err := os.Stat(repo); err != nil {
		gittest.InitRepo(t, repo)
	}
	return gittest.Commit(t, repo, files, append([]gittest.CommitOption{gittest.Branch("main")}, opts...)...)
}

func (w *world) agent(t *testing.T, p model.Project, name string) store.ClusterAgent {
	t.Helper()
	a := store.ClusterAgent{ProjectID: p.ID, Name: name}
	if err := w.db.InTx(context.Background(), func(tx *store.Tx) error { return tx.CreateClusterAgent(context.Background(), &a) }); err != nil {
		t.Fatal(err)
	}
	return a
}

// authorizing names the agents authorizing p's jobs.
func (w *world) authorizing(t *testing.T, p model.Project) []string {
	t.Helper()
	list, err := w.svc.Authorizing(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range list {
		if a.ConfigProject.ID != a.ProjectID {
			t.Fatalf("agent %s with configuration project %d; want %d", a.Name, a.ConfigProject.ID, a.ProjectID)
		}
		out = append(out, a.Name)
	}
	return out
}

// TestAuthorizing_configurations: an agent authorizes the jobs of its own
// project always; of the projects its config.yaml (default branch, the
// .service/ folder before .gitlab/) lists by path, ignoring case; and of
// the projects under the groups it lists — within its root namespace only.
// A missing, unreadable or malformed file authorizes nothing more; a new
// commit on the default branch is read again.
func TestAuthorizing_configurations(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		w := newWorld(t, target)
		owner := storetest.NewUser(t, w.db)
		top := storetest.NewGroup(t, w.db, owner)
		sub := storetest.NewGroup(t, w.db, owner, storetest.Parent(top))
		elsewhere := storetest.NewGroup(t, w.db, owner)
		cfg := storetest.NewProject(t, w.db, owner, storetest.InGroup(top))
		job := storetest.NewProject(t, w.db, owner, storetest.InGroup(sub))
		sibling := storetest.NewProject(t, w.db, owner, storetest.InGroup(top))
		foreign := storetest.NewProject(t, w.db, owner, storetest.InGroup(elsewhere))
		personal := storetest.NewProject(t, w.db, owner)

		for _, n := range []string{"by-group", "by-path", "gitlab-only", "shadowed", "broken", "absent", "too-big"} {
			w.agent(t, cfg, n)
		}
		w.agent(t, job, "own")
		// Another root namespace's agent cannot reach into this one.
		w.agent(t, foreign, "intruder")
		w.commit(t, foreign, gittest.Files{".gitlab/agents/intruder/config.yaml": "ci_access:\n  groups:\n    - id: " + top.FullPath + "\n"})
		w.agent(t, personal, "mine")
		w.commit(t, personal, gittest.Files{".gitlab/agents/mine/config.yaml": "ci_access:\n  groups:\n    - id: " + owner.Username + "\n"})

		huge := "ci_access:\n  projects:\n    - id: " + job.FullPath() + "\n#"
		for len(huge) <= agents.MaxConfigBytes {
			huge += "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		}
		w.commit(t, cfg, gittest.Files{
			".gitlab/agents/by-group/config.yaml":    "ci_access:\n  groups:\n    - id: " + sub.FullPath + "\n",
			".gitlab/agents/by-path/config.yaml":     "gitops: {}\nci_access:\n  projects:\n    - id: " + upper(job.FullPath()) + "\n",
			".gitlab/agents/gitlab-only/config.yaml": "ci_access:\n  projects:\n    - id: " + sibling.FullPath() + "\n",
			// .service/ wins over .gitlab/.
			".service/agents/shadowed/config.yaml": "ci_access:\n  projects:\n    - id: " + sibling.FullPath() + "\n",
			".gitlab/agents/shadowed/config.yaml":  "ci_access:\n  projects:\n    - id: " + job.FullPath() + "\n",
			".gitlab/agents/broken/config.yaml":    "ci_access: [\n  projects: " + job.FullPath(),
			".gitlab/agents/too-big/config.yaml":   huge,
		})

		if got, want := w.authorizing(t, job), []string{"by-group", "by-path", "own"}; !slices.Equal(got, want) {
			t.Fatalf("agents for the job's project %v; want %v", got, want)
		}
		if got, want := w.authorizing(t, sibling), []string{"gitlab-only", "shadowed"}; !slices.Equal(got, want) {
			t.Fatalf("agents for the sibling %v; want %v", got, want)
		}
		if got := w.authorizing(t, cfg); len(got) != 7 {
			t.Fatalf("agents for the configuration project %v; want its 7", got)
		}
		if got, want := w.authorizing(t, foreign), []string{"intruder"}; !slices.Equal(got, want) {
			t.Fatalf("agents for the foreign project %v; want %v", got, want)
		}
		// Groups count only when the root is a group: a personal
		// namespace is not one.
		other := storetest.NewProject(t, w.db, owner)
		if got := w.authorizing(t, other); len(got) != 0 {
			t.Fatalf("agents for another personal project %v; want none", got)
		}

		// A new commit on the default branch is read again.
		w.commit(t, cfg, gittest.Files{".gitlab/agents/by-group/config.yaml": "ci_access: {}\n",
			".gitlab/agents/absent/config.yaml": "ci_access:\n  groups:\n    - id: " + top.FullPath + "\n"})
		if got, want := w.authorizing(t, job), []string{"by-path", "absent", "own"}; !slices.Equal(got, want) {
			t.Fatalf("after a new commit: %v; want %v", got, want)
		}
		// Removing an agent removes its authorization.
		agentsOf, _, err := w.db.ClusterAgents(context.Background(), cfg.ID, model.Page{Number: 1, PerPage: 20})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range agentsOf {
			if a.Name == "by-path" {
				if err := w.db.InTx(context.Background(), func(tx *store.Tx) error { return tx.DeleteClusterAgent(context.Background(), a.ID) }); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got, want := w.authorizing(t, job), []string{"absent", "own"}; !slices.Equal(got, want) {
			t.Fatalf("after removing an agent: %v; want %v", got, want)
		}
	})
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// TestAllowedAgents_forJob: a job token's actor gets the agents of its
// job's project with the job, its pipeline, its project and its user; a
// request without a job, or for a job that is gone, is 404 Job Not Found.
func TestAllowedAgents_forJob(t *testing.T) {
	storetest.Each(t, func(t *testing.T, target storetest.Target) {
		w := newWorld(t, target)
		ctx := context.Background()
		owner := storetest.NewUser(t, w.db)
		g := storetest.NewGroup(t, w.db, owner)
		cfg := storetest.NewProject(t, w.db, owner, storetest.InGroup(g))
		p := storetest.NewProject(t, w.db, owner, storetest.InGroup(g))
		a := w.agent(t, cfg, "deployer")
		w.agent(t, cfg, "unrelated")
		w.commit(t, cfg, gittest.Files{".gitlab/agents/deployer/config.yaml": "ci_access:\n  projects:\n    - id: " + p.FullPath() + "\n"})

		pl := model.Pipeline{ProjectID: p.ID, Ref: "main", SHA: "abc", BeforeSHA: model.ZeroRef, Source: model.SourcePush, Status: model.StatusRunning}
		j := model.Job{ProjectID: p.ID, Kind: model.JobBuild, Name: "deploy", Stage: "deploy", Status: model.StatusCreated,
			When: model.WhenOnSuccess, Ref: "main", SHA: "abc"}
		err := w.db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.CreatePipeline(ctx, &pl); err != nil {
				return err
			}
			j.PipelineID = pl.ID
			return tx.CreateJob(ctx, &j)
		})
		if err != nil {
			t.Fatal(err)
		}
		actor := auth.Actor{User: &owner, Job: &auth.JobActor{ID: j.ID, ProjectID: p.ID, PipelineID: pl.ID}}
		got, err := w.svc.AllowedAgents(ctx, actor)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Agents) != 1 || got.Agents[0].ID != a.ID || got.Agents[0].ConfigProject.ID != cfg.ID ||
			got.Job.ID != j.ID || got.Job.Name != "deploy" || got.Pipeline.ID != pl.ID || got.Project.ID != p.ID ||
			got.Project.Namespace.ID != g.ID || got.User == nil || got.User.ID != owner.ID {
			t.Fatalf("allowed agents %+v", got)
		}

		for name, a := range map[string]auth.Actor{
			"no job":       {User: &owner},
			"job gone":     {User: &owner, Job: &auth.JobActor{ID: j.ID + 1000000, ProjectID: p.ID, PipelineID: pl.ID}},
			"anonymous":    auth.Anonymous,
			"personal key": {User: &owner, Token: &model.PersonalAccessToken{}},
		} {
			_, err := w.svc.AllowedAgents(ctx, a)
			var me *model.Error
			if !errors.As(err, &me) || me.Kind != model.KindNotFound || me.Message != "404 Job Not Found" {
				t.Errorf("%s: %v; want 404 Job Not Found", name, err)
			}
		}
	})
}
