// Package stress holds the stress suite of issue #8: scenarios that prove
// the profiler never hurts its target (attach/detach cycles under load, 32
// threads, SIGSTOP/SIGCONT, a target killed or crashing, the profiler
// interrupted or SIGKILLed, at random moments and at every step of attach
// and detach), each run through the profile binary the way a user runs it.
//
// The tests carry the build tag "stress", so that "make test" skips them:
//
//	make stress    # go test -tags stress -count=1 -v -timeout 40m ./stress/
//
// STRESS_SEED=N changes the seed of the random kill moments (default 8,
// printed by the scenarios that use it).
package stress
