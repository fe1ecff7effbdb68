package model

// childIndex maps a (parent node, function) key to the child node: open
// addressing on one 64-bit word with a multiplicative hash. The recorder
// asks it at every traced call; a Go map with a two-int key cost a third
// of the tracer's time per call (hashing the key).
type childIndex struct {
	keys  []uint64 // 0: empty
	vals  []int32
	n     int
	shift uint // 64 - log2(len(keys))
}

// childKey packs parent (≥ 0) and fn (a function index) into a non-zero
// key.
func childKey(parent, fn int) uint64 { return uint64(parent+1)<<32 | uint64(uint32(fn)) }

func (c *childIndex) slot(k uint64) uint64 { return (k * 0x9e3779b97f4a7c15) >> c.shift }

func (c *childIndex) get(k uint64) (int, bool) {
	if c.n == 0 {
		return 0, false
	}
	mask := uint64(len(c.keys) - 1)
	for h := c.slot(k); ; h = (h + 1) & mask {
		switch c.keys[h] {
		case k:
			return int(c.vals[h]), true
		case 0:
			return 0, false
		}
	}
}

// put adds k (not present) → v, keeping the table at most half full.
func (c *childIndex) put(k uint64, v int) {
	if 2*(c.n+1) > len(c.keys) {
		c.grow()
	}
	mask := uint64(len(c.keys) - 1)
	h := c.slot(k)
	for c.keys[h] != 0 {
		h = (h + 1) & mask
	}
	c.keys[h], c.vals[h] = k, int32(v)
	c.n++
}

func (c *childIndex) grow() {
	keys, vals := c.keys, c.vals
	size, shift := 64, uint(58)
	if len(keys) > 0 {
		size, shift = 2*len(keys), c.shift-1
	}
	*c = childIndex{keys: make([]uint64, size), vals: make([]int32, size), shift: shift}
	for i, k := range keys {
		if k != 0 {
			c.put(k, int(vals[i]))
		}
	}
}
