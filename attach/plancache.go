package attach

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/profile-dev/profile/attach/internal/plancache"
	"github.com/profile-dev/profile/instrument"
)

// The plans a module's sweep makes from its file (exit plans, entry
// branches) kept on disk between sessions (attach/internal/plancache):
// the next session that maps the same file with the same symbols, under
// the same build of profile, reads them instead of every instruction of
// every function.

// planCaching is the cache's state in a session: tool names the build of
// profile ("" until asked, "-" if it cannot be told: no cache).
type planCaching struct {
	tool string
}

// cachedPlans counts what the cache gave a module: exit plans and entry
// branches.
type cachedPlans struct{ exits, swept int }

// planKey is the cache key of mod, "" when there is no cache: none asked
// for (Options.PlanCache), the build unknown, or the file changed since
// it was opened (its plans would be filed under the new bytes).
func (e *engine) planKey(mod *instrument.Module) string {
	if e.opt.PlanCache == "" {
		return ""
	}
	if e.planCaching.tool == "" {
		e.planCaching.tool = "-"
		if id, err := plancache.ToolID(); err == nil {
			e.planCaching.tool = id
		}
	}
	if e.planCaching.tool == "-" {
		return ""
	}
	// The file: by its build ID and size where it has one (the linker
	// hashed its content into it), else by its bytes.
	var file io.Reader
	if mod.BuildID != "" {
		st, err := os.Stat(mod.Path)
		if err != nil {
			return ""
		}
		file = strings.NewReader(fmt.Sprintf("build-id %s size %d", mod.BuildID, st.Size()))
	} else {
		f, err := os.Open(mod.Path)
		if err != nil {
			return ""
		}
		defer f.Close()
		file = f
	}
	key, err := plancache.Key(e.planCaching.tool, file, mod.SymbolDigest())
	if err != nil || !mod.Unchanged() {
		return ""
	}
	return key
}

// loadPlans gives mod the plans the cache keeps under key: its exit plans
// to the session's, its entry branches to mod. It returns the link-time
// addresses of the functions whose exit plans it gave, and how many it
// gave of each kind.
func (e *engine) loadPlans(mod *instrument.Module, key string) (map[uint64]bool, cachedPlans) {
	var n cachedPlans
	if key == "" {
		return nil, n
	}
	plans := plancache.Load(e.opt.PlanCache, key)
	planned := map[uint64]bool{}
	for at, ent := range plans {
		if x := ent.Exits; x != nil {
			p := plannedExits{plan: x.Plan}
			if x.Err != "" {
				p.err = errors.New(x.Err)
			}
			e.exitPlans.keep(mod, at, p)
			planned[at] = true
		}
		if s := ent.Swept; s != nil {
			var err error
			if s.Err != "" {
				err = errors.New(s.Err)
			}
			mod.KeepSwept(at, s.Branches, err)
			n.swept++
		}
	}
	n.exits = len(planned)
	e.stats.PlansCached += n.exits
	return planned, n
}

// savePlans files mod's plans under key when the session made some the
// cache did not give (it gave loaded).
func (e *engine) savePlans(mod *instrument.Module, key string, loaded cachedPlans) {
	swept := 0
	mod.EachSwept(func(uint64, []instrument.EntryBranch, error) { swept++ })
	if key == "" || len(e.exitPlans[mod]) == loaded.exits && swept == loaded.swept {
		return
	}
	plans := plancache.Plans{}
	for at, p := range e.exitPlans[mod] {
		plans[at] = plancache.Entry{Exits: &plancache.Exits{Plan: p.plan, Err: errText(p.err)}}
	}
	mod.EachSwept(func(at uint64, branches []instrument.EntryBranch, err error) {
		ent := plans[at]
		ent.Swept = &plancache.Swept{Branches: branches, Err: errText(err)}
		plans[at] = ent
	})
	// A cache that cannot be written costs the next session its time,
	// nothing else: said by --stats, not as a warning.
	if err := plancache.Save(e.opt.PlanCache, key, plans); err != nil && e.stats.PlanCacheErr == "" {
		e.stats.PlanCacheErr = err.Error()
	}
}

// errText is err's text, "" for none.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
