/*
 * libspin.so: where the inlib workload spends its CPU, as python spends
 * its own in libpython: the program's executable only calls in.
 */
__attribute__((noinline, noclone, noipa)) unsigned long spin_mix(unsigned long x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdUL;
	x ^= x >> 33;
	return x;
}

unsigned long spin(long n)
{
	unsigned long h = 0;
	for (long i = 0; i < n; i++)
		h = spin_mix(h ^ (unsigned long)i);
	return h;
}
