package instrument

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/profile-dev/profile/model"
)

// MaxComponents is how many components a context may have: the inline
// probes' ids carry a component's index in three bits.
const MaxComponents = 7

// Context is a calling context (--context 'A>B', a specified sequence of
// components; docs/discover.md): the functions it gates are recorded only
// while its components are on the thread's stack, outermost first, in
// that order with anything between them.
type Context struct {
	components []string        // function names, or module:function
	gated      map[string]bool // module:function keys
}

// ParseContext reads 'A>B>...': one to seven function names or
// module:function keys.
func ParseContext(s string) (*Context, error) {
	parts := strings.Split(s, ">")
	if len(parts) > MaxComponents {
		return nil, fmt.Errorf("%q: at most %d functions", s, MaxComponents)
	}
	c := &Context{gated: map[string]bool{}}
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("%q: want functions separated by '>', as A>B", s)
		}
		c.components = append(c.components, p)
	}
	return c, nil
}

// Gate records the functions (module:function keys) the context gates.
func (c *Context) Gate(keys []string) {
	for _, k := range keys {
		c.gated[k] = true
	}
}

// Len is the number of components.
func (c *Context) Len() int { return len(c.components) }

// String is the context as given, A>B.
func (c *Context) String() string { return strings.Join(c.components, ">") }

// Role says what function name of the module at path is to the context:
// the index of the component it is (named by its function name or
// module:function), or -1 and whether it is recorded only inside the
// context (a component never is).
func (c *Context) Role(path, name string) (component int, gated bool) {
	key := model.FuncKey(path, name)
	for i, comp := range c.components {
		if comp == name || comp == key {
			return i, false
		}
	}
	return -1, c.gated[key]
}

// Module tells whether some component is named with the module at path.
func (c *Context) Module(path string) bool {
	base := filepath.Base(path)
	for _, comp := range c.components {
		if m, _, ok := strings.Cut(comp, ":"); ok && m == base {
			return true
		}
	}
	return false
}
