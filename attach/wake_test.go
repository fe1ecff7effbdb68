package attach

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestWakeWithoutTrue: on a machine without true (a container holding
// little but profile), the tracer's wake-up child is its own executable,
// which exits at once (WakerEnv): an attach to a program that sleeps, so
// that nothing else ends the tracer's wait, still detaches when it is
// asked to, long before the program wakes, and the program lives on.
func TestWakeWithoutTrue(t *testing.T) {
	target := exec.Command("sleep", "60")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Process.Kill(); target.Wait() })
	time.Sleep(100 * time.Millisecond)
	opt := defaultOptions(t)
	opt.wakers = []string{"/nonexistent/true", "/proc/self/exe"}
	stop := attachRunning(t, target.Process.Pid, opt)
	time.Sleep(300 * time.Millisecond)
	done := make(chan error, 1)
	go func() { _, err := stop(); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("attach: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the attach did not end when asked: its wait was not woken")
	}
	if err := target.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("target gone after the detach: %v", err)
	}
}
