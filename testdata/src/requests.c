/*
 * requests: a server loop handling requests, of which a known few are
 * slow and a known few fail, for detail recording (--detail).
 *
 *   requests [N [SECONDS]]      (default 1000 requests, once)
 *
 *   main -> serve -> handle_request(id, size, flags) -> parse(id)
 *                                                    -> lookup(id)
 *
 * Among ids 0..N-1, those with id % 143 == 50 are slow (lookup sleeps
 * 50 ms: ids 50, 193, 336, 479, 622, 765, 908 for N = 1000) and those with
 * id % 331 == 100 fail (handle_request returns -1 - id % 5: ids 100, 431,
 * 762). size = id * 100 + 7, flags = id ^ 0x55; a request that does
 * neither returns id % 1000. Each slow or failing request is logged as
 * "slow|fail id=I size=S flags=F ret=R". With SECONDS > 0 the requests
 * are served again and again (ids from 0 each round) until that many
 * seconds have passed; the log then only counts rounds. Exit 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TRACED __attribute__((noinline, noclone, noipa))

static volatile long sink;

TRACED long parse(int id)
{
	sink += id;
	return id & 0xff;
}

TRACED long lookup(int id)
{
	if (id % 143 == 50) {
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
	return (long)id * 3;
}

TRACED int handle_request(int id, long size, int flags)
{
	sink += parse(id) + size + flags;
	sink += lookup(id);
	if (id % 331 == 100)
		return -1 - id % 5;
	return id % 1000;
}

TRACED long serve(int n, int quiet)
{
	long sum = 0;
	for (int id = 0; id < n; id++) {
		long size = (long)id * 100 + 7;
		int flags = id ^ 0x55;
		int ret = handle_request(id, size, flags);
		sum += ret;
		if (quiet)
			continue;
		if (id % 143 == 50)
			printf("slow id=%d size=%ld flags=%d ret=%d\n", id, size, flags, ret);
		if (ret < 0)
			printf("fail id=%d size=%ld flags=%d ret=%d\n", id, size, flags, ret);
	}
	return sum;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	double seconds = argc > 2 ? atof(argv[2]) : 0;
	if (seconds <= 0) {
		serve(n, 0);
		return 0;
	}
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long rounds = 0;
	do {
		serve(n, 1);
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	printf("rounds=%ld\n", rounds);
	return 0;
}
