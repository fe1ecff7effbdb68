// Package lifeline lets the traced processes learn, without a system call,
// that their tracer died, however it died (SIGKILL included).
//
// It uses the kernel's robust futex list: a thread registers a list of
// words, each holding its thread id, and when the thread exits the kernel
// rewrites each word that still holds it to FUTEX_OWNER_DIED. The words
// live in memory the tracer shares with a target (its rings), so a stub
// waiting there for the tracer sees the mark at its next look, where
// before it waited out a time limit. The list's nodes sit beside their
// words (a node is 16 bytes: the next node's address, then the word), as
// the kernel finds each word at a fixed offset from its node.
package lifeline

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	// NodeSize is the bytes a node takes: its link, then its word.
	NodeSize = 16
	// WordOffset is the word's offset in its node.
	WordOffset = 8
	// OwnerDied is the kernel's mark in a word whose thread exited.
	OwnerDied = 0x40000000

	headSize = 24 // struct robust_list_head: next, futex_offset, list_op_pending
)

// A Line is the robust list of one thread: the thread that registered it,
// which must stay locked to its goroutine until Close.
type Line struct {
	mu    sync.Mutex
	head  []byte           // mapped apart from Go's heap: the kernel reads it as the thread exits
	nodes []unsafe.Pointer // in list order
	tid   int
}

// Register makes a line for the calling thread, which must be locked to
// its goroutine (runtime.LockOSThread).
func Register() (*Line, error) {
	head, err := unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("lifeline: %w", err)
	}
	l := &Line{head: head, tid: unix.Gettid()}
	binary.LittleEndian.PutUint64(head[0:], uint64(uintptr(l.headAddr()))) // empty: the list is circular
	binary.LittleEndian.PutUint64(head[8:], WordOffset)
	if _, _, errno := unix.RawSyscall(unix.SYS_SET_ROBUST_LIST, uintptr(l.headAddr()), headSize, 0); errno != 0 {
		unix.Munmap(head)
		return nil, fmt.Errorf("lifeline: set_robust_list: %w", errno)
	}
	return l, nil
}

// Tid is the thread whose exit the line reports.
func (l *Line) Tid() int { return l.tid }

func (l *Line) headAddr() unsafe.Pointer { return unsafe.Pointer(&l.head[0]) }

// link stores a node's (or the head's) next address atomically: the kernel
// may walk the list at any instant (a SIGKILL).
func link(at, next unsafe.Pointer) {
	atomic.StoreUint64((*uint64)(at), uint64(uintptr(next)))
}

// Tie writes the line's thread id into the word of node (NodeSize bytes
// of shared memory, 8-aligned) and links the node first in the list. The
// node must stay mapped until Untie.
func (l *Line) Tie(node []byte) {
	at := unsafe.Pointer(&node[0])
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.head == nil {
		return
	}
	atomic.StoreUint32((*uint32)(unsafe.Add(at, WordOffset)), uint32(l.tid))
	next := l.headAddr()
	if len(l.nodes) > 0 {
		next = l.nodes[0]
	}
	link(at, next)
	link(l.headAddr(), at)
	l.nodes = append([]unsafe.Pointer{at}, l.nodes...)
}

// Untie unlinks node, which may then be unmapped. Its word keeps the
// thread id: the kernel leaves it alone.
func (l *Line) Untie(node []byte) {
	at := unsafe.Pointer(&node[0])
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.head == nil {
		return
	}
	for i, n := range l.nodes {
		if n != at {
			continue
		}
		prev, next := l.headAddr(), l.headAddr()
		if i > 0 {
			prev = l.nodes[i-1]
		}
		if i+1 < len(l.nodes) {
			next = l.nodes[i+1]
		}
		link(prev, next)
		l.nodes = append(l.nodes[:i], l.nodes[i+1:]...)
		return
	}
}

// Close unregisters the line; it must run on the thread that registered
// it. Words still tied are left holding the thread id; Tie and Untie do
// nothing after.
func (l *Line) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.head == nil {
		return
	}
	unix.RawSyscall(unix.SYS_SET_ROBUST_LIST, 0, headSize, 0)
	unix.Munmap(l.head)
	l.head, l.nodes = nil, nil
}
