package model

import "testing"

// The child index finds every (parent, function) it was given, across its
// growth, and nothing else: parent 0 with function 0 included, functions
// beyond 32 bits of parent apart.
func TestChildIndex(t *testing.T) {
	var c childIndex
	if _, ok := c.get(childKey(0, 0)); ok {
		t.Fatal("an empty index finds (0, 0)")
	}
	type pf struct{ parent, fn int }
	var keys []pf
	for p := 0; p < 40; p++ {
		for f := 0; f < 50; f += 1 + p%3 {
			keys = append(keys, pf{p, f})
		}
	}
	keys = append(keys, pf{1 << 30, 1<<31 - 1})
	for i, k := range keys {
		c.put(childKey(k.parent, k.fn), i)
	}
	for i, k := range keys {
		if v, ok := c.get(childKey(k.parent, k.fn)); !ok || v != i {
			t.Errorf("(%d, %d) = %d, %v; want %d", k.parent, k.fn, v, ok, i)
		}
	}
	for _, k := range []pf{{0, 50}, {2, 1}, {40, 0}, {1, 49}, {1 << 30, 0}} {
		if v, ok := c.get(childKey(k.parent, k.fn)); ok {
			t.Errorf("(%d, %d) found (%d), never put", k.parent, k.fn, v)
		}
	}
	if c.n != len(keys) || 2*c.n > len(c.keys) {
		t.Errorf("%d keys in %d slots, want %d at most half full", c.n, len(c.keys), len(keys))
	}
}
