package attach

import "testing"

// A launched program runs without the parent-death signal its handover
// needed (it would be sent SIGCONT when profile ends): it prints what an
// untraced run does, "deathsig: 0" (18, SIGCONT, with the signal left).
func TestLaunchedWithoutDeathSignal(t *testing.T) {
	want, code := untraced(t, "deathsig")
	if want != "deathsig: 0\n" || code != 0 {
		t.Fatalf("untraced: %q, exit %d", want, code)
	}
	forEachProbe(t, func(t *testing.T, opt Options) {
		if _, out := recordWorkload(t, "deathsig", opt); out != want {
			t.Errorf("traced: %q, untraced %q", out, want)
		}
	})
}
