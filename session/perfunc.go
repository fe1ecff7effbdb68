package session

// perFunc keeps the answer to a question about each function, asked of
// ask once per function index: the probes ask at every call.
type perFunc[T any] struct {
	ask  func(fn int) T
	vals []T
	seen []bool
}

// get is ask(fn), asked once; the zero T for no function (fn < 0) or no
// question.
func (c *perFunc[T]) get(fn int) T {
	var zero T
	if c.ask == nil || fn < 0 {
		return zero
	}
	if fn >= len(c.seen) {
		c.vals = append(c.vals, make([]T, fn+1-len(c.vals))...)
		c.seen = append(c.seen, make([]bool, fn+1-len(c.seen))...)
	}
	if !c.seen[fn] {
		c.vals[fn], c.seen[fn] = c.ask(fn), true
	}
	return c.vals[fn]
}
