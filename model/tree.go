package model

// Tree builds one thread's CCT: children are keyed by function, so repeated
// calls of a callee from one context share a node (§2.1).
type Tree struct {
	Nodes []Node
	kids  map[childKey]int
}

type childKey struct {
	parent int
	fn     int
}

// NewTree returns a tree holding only the START root.
func NewTree() *Tree {
	return &Tree{
		Nodes: []Node{{Func: StartFunc, Parent: None}},
		kids:  make(map[childKey]int),
	}
}

// TreeOf indexes existing nodes (parents before children) for more building.
func TreeOf(nodes []Node) *Tree {
	t := &Tree{Nodes: nodes, kids: make(map[childKey]int, len(nodes))}
	for i := 1; i < len(nodes); i++ {
		t.kids[childKey{nodes[i].Parent, nodes[i].Func}] = i
	}
	return t
}

// Child returns the node for fn under parent, creating it if new.
func (t *Tree) Child(parent, fn int) int {
	k := childKey{parent, fn}
	if i, ok := t.kids[k]; ok {
		return i
	}
	t.Nodes = append(t.Nodes, Node{Func: fn, Parent: parent})
	i := len(t.Nodes) - 1
	t.kids[k] = i
	return i
}

// Lookup returns the node for fn under parent, if it exists.
func (t *Tree) Lookup(parent, fn int) (int, bool) {
	i, ok := t.kids[childKey{parent, fn}]
	return i, ok
}
