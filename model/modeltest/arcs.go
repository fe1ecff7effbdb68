package modeltest

import (
	"fmt"
	"strings"

	"github.com/profile-dev/profile/model"
)

// Arcs shows thread t's arcs as "caller>callee calls", "-" for a caller
// of no function, then a composite thread's member shares as
// " [member:calls ...]".
func Arcs(p *model.Profile, t *model.Thread) []string {
	var out []string
	for _, a := range t.Arcs {
		caller := "-"
		if a.Caller != model.None {
			caller = p.FuncName(a.Caller)
		}
		s := fmt.Sprintf("%s>%s %d", caller, p.FuncName(a.Callee), a.Calls)
		if len(a.Contribs) > 0 {
			shares := make([]string, len(a.Contribs))
			for i, c := range a.Contribs {
				shares[i] = fmt.Sprintf("%d:%d", c.Member, c.Calls)
			}
			s += " [" + strings.Join(shares, " ") + "]"
		}
		out = append(out, s)
	}
	return out
}
