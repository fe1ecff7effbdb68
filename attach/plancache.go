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
			p := plannedExits{plan: instrument.ExitPlan{Tails: make([]instrument.TailSite, 0, len(x.Tails))}}
			for _, r := range x.Regions {
				p.plan.Regions = append(p.plan.Regions, instrument.ExitRegion{Off: r[0], Len: r[1], Ret: r[2]})
			}
			for _, t := range x.Tails {
				p.plan.Tails = append(p.plan.Tails, instrument.TailSite{Off: t.Off, Len: t.Len, To: t.To, Ends: t.Ends})
			}
			if x.Err != "" {
				p.err = errors.New(x.Err)
			}
			e.exitPlans.keep(mod, at, p)
			planned[at] = true
		}
		if s := ent.Swept; s != nil {
			var b []instrument.EntryBranch
			for _, br := range s.Branches {
				b = append(b, instrument.EntryBranch{From: br[0], To: br[1]})
			}
			var err error
			if s.Err != "" {
				err = errors.New(s.Err)
			}
			mod.RestoreSwept(at, b, err)
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
		x := &plancache.Exits{}
		for _, r := range p.plan.Regions {
			x.Regions = append(x.Regions, [3]int{r.Off, r.Len, r.Ret})
		}
		for _, t := range p.plan.Tails {
			x.Tails = append(x.Tails, plancache.Tail{Off: t.Off, Len: t.Len, To: t.To, Ends: t.Ends})
		}
		if p.err != nil {
			x.Err = p.err.Error()
		}
		plans[at] = plancache.Entry{Exits: x}
	}
	mod.EachSwept(func(at uint64, branches []instrument.EntryBranch, err error) {
		s := &plancache.Swept{}
		for _, b := range branches {
			s.Branches = append(s.Branches, [2]int{b.From, b.To})
		}
		if err != nil {
			s.Err = err.Error()
		}
		ent := plans[at]
		ent.Swept = s
		plans[at] = ent
	})
	// A cache that cannot be written costs the next session its time,
	// nothing else: said by --stats, not as a warning.
	if err := plancache.Save(e.opt.PlanCache, key, plans); err != nil && e.stats.PlanCacheErr == "" {
		e.stats.PlanCacheErr = err.Error()
	}
}
