package model_test

import (
	"slices"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

func TestCallListsSorted(t *testing.T) {
	for name, l := range map[string][]string{"WaitingCalls": model.WaitingCalls(), "DefaultLibCalls": model.DefaultLibCalls()} {
		if !slices.IsSorted(l) || len(slices.Compact(slices.Clone(l))) != len(l) {
			t.Errorf("%s is not sorted or has duplicates: %v", name, l)
		}
	}
	w := model.WaitingCalls()
	w[0] = "changed"
	if model.WaitingCalls()[0] == "changed" {
		t.Error("WaitingCalls returned the package's own slice")
	}
	// the tracer's default: every waiting call and the creation calls
	def := model.DefaultLibCalls()
	for _, c := range append(model.WaitingCalls(), "pthread_create", "fork", "vfork", "posix_spawn") {
		if _, ok := slices.BinarySearch(def, c); !ok {
			t.Errorf("DefaultLibCalls lacks %s", c)
		}
	}
}

func TestIsWaitingCall(t *testing.T) {
	for _, name := range []string{"epoll_wait", "poll", "select", "read", "write", "pread64", "preadv2", "recv",
		"recvmsg", "sendto", "accept4", "connect", "nanosleep", "clock_nanosleep", "usleep", "sleep",
		"pthread_cond_wait", "pthread_cond_timedwait", "pthread_mutex_lock", "pthread_join", "sem_wait",
		"sem_timedwait", "waitpid", "wait4", "__libc_read", "__nanosleep", "read@@GLIBC_2.2.5", "system"} {
		if !model.IsWaitingCall(name) {
			t.Errorf("%s is not waiting", name)
		}
	}
	for _, name := range []string{"readdir", "printf", "pthread_mutex_unlock", "pthread_create", "fork", "malloc",
		"selection", "sendfile", ""} {
		if model.IsWaitingCall(name) {
			t.Errorf("%s is waiting", name)
		}
	}
}

// Only library functions wait: a program's own read is its code.
func TestWaitingFuncs(t *testing.T) {
	b := modeltest.NewBuilder("/bin/app")
	pr := b.Process(1, model.None, "", 0)
	b.Thread(pr, 1, 0, "", 0, nil, []modeltest.Step{
		{Dt: 1, Func: "main"}, {Dt: 1, Func: "read"}, {Dt: 5}, {Dt: 1, Func: "libc.so.6:read"}, {Dt: 7}, {Dt: 1},
	})
	w := b.P.WaitingFuncs()
	for f := range b.P.Functions {
		want := b.P.FuncName(f) == "libc.so.6:read"
		if w[f] != want {
			t.Errorf("%s: waiting %v", b.P.FuncName(f), w[f])
		}
	}
}

func TestIsCreationCall(t *testing.T) {
	for name, want := range map[string]bool{
		"pthread_create": true, "fork": true, "vfork": true, "posix_spawn": true, "system": true,
		"clone": true, "clone3": true, "_Fork": true, "__libc_fork": true,
		"pthread_join": false, "read": false, "main": false,
	} {
		if got := model.IsCreationCall(name); got != want {
			t.Errorf("IsCreationCall(%q) = %v, want %v", name, got, want)
		}
	}
}
