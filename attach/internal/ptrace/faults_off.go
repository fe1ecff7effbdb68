//go:build !faultinject

package ptrace

// faultPoint marks an operation on the target: a test build counts them
// and can kill the profiler at any one (faults_on.go).
func faultPoint() {}
