package model_test

import (
	"testing"

	"github.com/profile-dev/profile/model"
)

func TestStartedAs(t *testing.T) {
	for _, c := range []struct {
		argv0, comm, exe, want string
	}{
		{"redis-server", "redis-server", "/usr/bin/redis-check-rdb", "redis-server (/usr/bin/redis-check-rdb)"},
		{"/usr/bin/redis-server", "redis-server", "/usr/bin/redis-check-rdb", "redis-server (/usr/bin/redis-check-rdb)"},
		// a process title written over argv, as redis-server's
		{"/usr/bin/redis-server *:6379", "redis-server", "/usr/bin/redis-check-rdb", "redis-server (/usr/bin/redis-check-rdb)"},
		{"./myserver", "myserver", "/tmp/bin/threads", "myserver (/tmp/bin/threads)"},
		{"./threads", "threads", "/tmp/bin/threads", "/tmp/bin/threads"},
		{"threads", "", "/tmp/bin/threads", "/tmp/bin/threads"},
		{"", "myserver", "/tmp/bin/threads", "myserver (/tmp/bin/threads)"},
		{"", "threads", "/tmp/bin/threads", "/tmp/bin/threads"},
		// comm is 15 bytes at most
		{"", "a_very_long_pro", "/bin/a_very_long_program", "/bin/a_very_long_program"},
		{"", "", "/bin/app", "/bin/app"},
		{"-bash", "bash", "/usr/bin/bash", "-bash (/usr/bin/bash)"},
		{"myserver", "myserver", "", "myserver"},
		{"", "", "", ""},
	} {
		if got := model.StartedAs(c.argv0, c.comm, c.exe); got != c.want {
			t.Errorf("StartedAs(%q, %q, %q) = %q, want %q", c.argv0, c.comm, c.exe, got, c.want)
		}
	}
}
