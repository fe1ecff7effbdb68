package cmd

import (
	"errors"
	"testing"

	"github.com/profile-dev/profile/attach"
)

func TestExpansionLine(t *testing.T) {
	at := attach.Expansion{AtNs: 634_999_999, Func: "work", SelfNs: 9_012_345}
	head := "profile: +0.63s: --auto-expand: work (9.01ms self so far)"
	with := func(f func(x *attach.Expansion)) attach.Expansion { x := at; f(&x); return x }
	for _, tc := range []struct {
		x    attach.Expansion
		want string
	}{
		{with(func(x *attach.Expansion) { x.Added = []string{"libc.so.6:snprintf", "libc.so.6:strtod"} }),
			head + ": tracing libc.so.6:snprintf, libc.so.6:strtod from now on"},
		{with(func(x *attach.Expansion) { x.Added, x.Unprobed = []string{"a"}, []string{"libm.so.6:b"} }),
			head + ": tracing a from now on (libm.so.6:b could not be probed)"},
		{with(func(x *attach.Expansion) { x.Unprobed = []string{"libm.so.6:b"} }), head + ": libm.so.6:b could not be probed"},
		{with(func(x *attach.Expansion) { x.Traced = 3 }), head + ": its 3 callees are traced already"},
		{at, head + ": no callee found in its code"},
		{with(func(x *attach.Expansion) { x.Err = errors.New("no traced process has libx.so loaded") }),
			head + ": no traced process has libx.so loaded"},
	} {
		if got := expansionLine(tc.x); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
