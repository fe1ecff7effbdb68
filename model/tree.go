package model

// Tree builds one thread's CCT: children are keyed by function, so repeated
// calls of a callee from one context share a node.
type Tree struct {
	Nodes []Node
	kids  childIndex
}

// NewTree returns a tree holding only the START root.
func NewTree() *Tree {
	return &Tree{Nodes: []Node{{Func: StartFunc, Parent: None}}}
}

// TreeOf indexes existing nodes (parents before children) for more building.
func TreeOf(nodes []Node) *Tree {
	t := &Tree{Nodes: nodes}
	for i := 1; i < len(nodes); i++ {
		t.kids.put(childKey(nodes[i].Parent, nodes[i].Func), i)
	}
	return t
}

// Child returns the node for fn under parent, creating it if new.
func (t *Tree) Child(parent, fn int) int {
	k := childKey(parent, fn)
	if i, ok := t.kids.get(k); ok {
		return i
	}
	t.Nodes = append(t.Nodes, Node{Func: fn, Parent: parent})
	i := len(t.Nodes) - 1
	t.kids.put(k, i)
	return i
}

// Lookup returns the node for fn under parent, if it exists.
func (t *Tree) Lookup(parent, fn int) (int, bool) {
	return t.kids.get(childKey(parent, fn))
}
