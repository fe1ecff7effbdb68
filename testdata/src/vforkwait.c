/*
 * vforkwait: vfork children that run traced code for a while before they
 * exec, so that a tracer stopping meanwhile finds the parent waiting in the
 * kernel (it cannot stop until its child execs or exits).
 *
 *   vforkwait [MS [ROUNDS]]      (default 500 ms, 2 rounds)
 *
 *   main -> spawn (ROUNDS times) -> vfork
 *             child: spin -> work (until MS ms have passed); execv /bin/true
 *             parent: waits for the child
 *
 * Prints "round R: exit S" per round (S the child's exit status, 0 when
 * /bin/true ran) and "done"; exits 0 only if every child exited 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TRACED __attribute__((noinline, noclone, noipa))

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

TRACED long work(long x)
{
	return x * 3 + 1;
}

/* spin calls work until ms have passed: the child's traced code. */
TRACED long spin(double ms)
{
	double end = now_ms() + ms;
	long acc = 0;
	while (now_ms() < end)
		for (int i = 0; i < 100; i++)
			acc = work(acc) & 0xffff;
	return acc;
}

TRACED int spawn(double ms)
{
	pid_t pid = vfork();
	if (pid < 0) {
		perror("vforkwait: vfork");
		return -1;
	}
	if (pid == 0) {
		char *argv[] = {"true", NULL};
		spin(ms);
		execv("/bin/true", argv);
		execv("/usr/bin/true", argv);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 500;
	int rounds = argc > 2 ? atoi(argv[2]) : 2;
	int bad = 0;
	for (int r = 1; r <= rounds; r++) {
		int s = spawn(ms);
		printf("round %d: exit %d\n", r, s);
		fflush(stdout);
		bad |= s != 0;
	}
	printf("done\n");
	return bad;
}
