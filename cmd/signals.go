package cmd

import (
	"os"
	"os/signal"
	"syscall"
)

// signalIgnoreInterrupt leaves terminal interrupts to the recorded program,
// which shares our process group: it decides whether Ctrl-C ends it. The
// signals are caught and dropped rather than ignored, because an ignored
// disposition would be inherited by the program across exec.
func signalIgnoreInterrupt() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGQUIT)
	go func() {
		for range ch {
		}
	}()
}
