package modeltest

import "github.com/profile-dev/profile/model"

// CPUSampled is a small profile recorded with CPU samples (record
// --sample) every 10ns, each CPU step's samples worth 10ns of sampled
// time. Thread 100 (level 0): 1 sample outside any function; main with
// 4 of its own; fib recursing to depth 3 with 1, 2 and 3 from the
// outermost activation in; 3 in the counted function hash called by main
// (7 counted calls: a context of hash below main made by the samples
// alone); 2 inside the waiting call read (the kernel copying, 2 samples
// in the kernel), none in usleep (sleeping 300ns); spawn_workers with 1 in
// pthread_create. Thread 101 (level 1, spawned by spawn_workers): 1 in
// hash before its first call (a context of hash below START), then
// worker calling compute with 6 of its own and 2 in hash (4 counted
// calls) and the counted function checksum called twice by hash, never
// sampled. 1 sample fell in the probes' code.
func CPUSampled() *model.Profile {
	b := NewBuilder("/bin/app")
	b.Period = 10
	p0 := b.Process(100, model.None, "", 0)
	b.Thread(p0, 100, 0, "", 0, nil, []Step{
		CPU(1, ""),
		Enter(100, "main"), CPU(4, ""),
		Enter(50, "fib"), CPU(1, ""), Enter(10, "fib"), CPU(2, ""), Enter(10, "fib"), CPU(3, ""), Exit(30), Exit(20), Exit(40),
		CPU(3, "hash"),
		PLT(5, "libc.so.6:read"), CPU(2, ""), Exit(500),
		PLT(5, "libc.so.6:usleep"), Exit(300),
		Enter(5, "spawn_workers"), PLT(5, "libc.so.6:pthread_create"), CPU(1, ""), Exit(20), Exit(5),
		Exit(10),
	})
	b.Thread(p0, 101, 100, "spawn_workers", 1, nil, []Step{
		CPU(1, "hash"),
		{Dt: 3, Func: "worker", Kind: model.KindIndirect}, Enter(5, "compute"), CPU(6, ""), CPU(2, "hash"), Exit(300), Exit(5),
	})
	b.Count(0, "main", "hash", 7)
	b.Count(1, "compute", "hash", 4)
	b.Count(1, "hash", "checksum", 2)
	b.P.Meta.CPUSamples = &model.CPUSamples{PeriodNs: b.Period, Samples: b.Samples, Kernel: 2, InProbes: 1, WithKernel: true}
	return b.P
}
