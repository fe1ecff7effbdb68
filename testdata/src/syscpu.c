/*
 * syscpu - waiting calls that compute and waiting calls that sleep: the
 * on-CPU split of waiting calls. Usage: syscpu ROUNDS
 *
 * Each round, slurp reads 8 MiB of /dev/urandom in 1 MiB reads (the
 * kernel generates the bytes: read(2) is on a CPU all along) and doze sleeps 5 ms
 * in usleep (off a CPU). It prints the kernel's own account of the
 * system CPU time slurp's reads took (getrusage, RUSAGE_THREAD) in
 * microseconds: "syscpu: ROUNDS rounds, read system time N us".
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))
#define CHUNK (1 << 20)

static char buf[CHUNK];
static long stime_us;

static long thread_stime_us(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec;
}

NOINLINE void slurp(int fd)
{
	long before = thread_stime_us();
	for (int i = 0; i < 8; i++) {
		if (read(fd, buf, CHUNK) != CHUNK) {
			perror("syscpu: read /dev/urandom");
			exit(1);
		}
	}
	stime_us += thread_stime_us() - before;
}

NOINLINE void doze(void) { usleep(5000); }

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20;
	int fd = open("/dev/urandom", O_RDONLY);
	if (fd < 0) {
		perror("syscpu: /dev/urandom");
		return 1;
	}
	for (long r = 0; r < rounds; r++) {
		slurp(fd);
		doze();
	}
	printf("syscpu: %ld rounds, read system time %ld us\n", rounds, stime_us);
	return 0;
}
