package diff_test

import (
	"testing"

	"github.com/profile-dev/profile/diff"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// newerSample is modeltest.Sample's program built elsewhere (/build/head/app
// against /bin/app) and changed: fib recurses one level deeper and is
// slower (calls 5 -> 4, self 135ns -> 220ns), usleep waits longer,
// cache_lookup is new, and the fork (do_fork, fork, child_work) and the
// level-2 thread (spawn_more, its pthread_create) are gone; main no longer
// calls worker, which runs as thread 101's root only, its compute faster.
func newerSample() *model.Profile {
	b := modeltest.NewBuilder("/build/head/app")
	p0 := b.Process(100, model.None, "", 0)
	b.Thread(p0, 100, 0, "", 0, nil, []modeltest.Step{
		modeltest.Enter(100, "main"),
		modeltest.Enter(50, "fib"), modeltest.Enter(20, "fib"), modeltest.Enter(20, "fib"), modeltest.Enter(20, "fib"), modeltest.Exit(40), modeltest.Exit(30), modeltest.Exit(30), modeltest.Exit(60),
		{Dt: 5, Func: "libc.so.6:usleep", Kind: model.KindPLT}, modeltest.Exit(900),
		modeltest.Enter(5, "cache_lookup"), modeltest.Exit(40),
		modeltest.Enter(5, "spawn_workers"), modeltest.Enter(5, "libc.so.6:pthread_create"), modeltest.Exit(20), modeltest.Exit(5),
		modeltest.Exit(10),
	})
	b.Thread(p0, 101, 100, "spawn_workers", 1, nil, []modeltest.Step{
		{Dt: 3, Func: "worker", Kind: model.KindIndirect},
		modeltest.Enter(5, "compute"), modeltest.Exit(150), modeltest.Exit(5),
	})
	return b.P
}

func compare(t *testing.T) *diff.Result {
	t.Helper()
	r, err := diff.Compare(modeltest.Sample(), newerSample())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
