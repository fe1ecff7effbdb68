/*
 * forks: a forked child that works, and a forked child that execs.
 *
 *   main -> compute x2
 *   main -> do_fork -> fork
 *             child:  child_work -> compute x5; _exit(0)
 *   main -> do_fork_exec -> fork
 *             child:  before_exec; execv(exec_target next to this binary)
 *
 * Processes besides the first: one forked by do_fork (exe "forks"), one
 * forked by do_fork_exec (exe "forks"), and the exec'd image "exec_target"
 * (same pid as the second child).  Function totals over all processes:
 * main 1, compute 7, do_fork 1, child_work 1, do_fork_exec 1, before_exec 1,
 * plus exec_target's own functions (see exec_target.c) keyed
 * "exec_target:<name>".
 *
 * Self-check: each child writes its counters into a pipe before _exit or
 * execv; the exec'd image writes its counters into the same pipe
 * (--selfcheck-raw=FD); the parent merges them and prints the totals.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(compute, "compute")                                                  \
	X(child_work, "child_work")                                            \
	X(do_fork, "do_fork")                                                  \
	X(before_exec, "before_exec")                                          \
	X(do_fork_exec, "do_fork_exec")
#include "selfcheck.h"

#include <sys/wait.h>

#define fail(what)                                                             \
	do {                                                                   \
		perror("forks: " what);                                        \
		exit(1);                                                       \
	} while (0)

TRACED long compute(long x)
{
	SC_ENTER(compute);
	long r = x * x * x - x;
	SC_LEAVE(compute);
	return r;
}

TRACED int child_work(void)
{
	SC_ENTER(child_work);
	long sum = 0;
	for (long i = 1; i <= 5; i++)
		sum += compute(i);
	/* sum of i^3 - i for i = 1..5 = 225 - 15 */
	SC_LEAVE(child_work);
	return sum == 210;
}

/* Wait for a child; returns 1 if it exited with status 0. */
#define reap(pid, who)                                                         \
	({                                                                     \
		int st_ = 0;                                                   \
		while (waitpid((pid), &st_, 0) < 0)                            \
			if (errno != EINTR)                                    \
				fail("waitpid");                               \
		if (!WIFEXITED(st_) || WEXITSTATUS(st_) != 0)                  \
			fprintf(stderr, "forks: %s child failed (status %#x)\n", \
				(who), st_);                                   \
		WIFEXITED(st_) && WEXITSTATUS(st_) == 0;                       \
	})

TRACED int do_fork(void)
{
	SC_ENTER(do_fork);
	int fds[2];
	sc_before_fork(fds);
	pid_t pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		sc_child_after_fork(fds);
		int ok = child_work();
		sc_child_report();
		_exit(ok ? 0 : 1);
	}
	SC_PARENT_AFTER_FORK(do_fork, fds);
	sc_merge_child(fds);
	int ok = reap(pid, "do_fork");
	SC_LEAVE(do_fork);
	return ok;
}

/* Path of exec_target: next to this executable. */
TRACED void before_exec(char *path, size_t len)
{
	SC_ENTER(before_exec);
	ssize_t n = readlink("/proc/self/exe", path, len - 1);
	if (n < 0)
		n = 0;
	path[n] = '\0';
	char *slash = strrchr(path, '/');
	size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
	snprintf(path + dir, len - dir, "%s", "exec_target");
	SC_LEAVE(before_exec);
}

TRACED int do_fork_exec(void)
{
	SC_ENTER(do_fork_exec);
	int fds[2];
	sc_before_fork(fds);
	pid_t pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		static char path[4096];
		char raw[64];
		sc_child_after_fork(fds);
		before_exec(path, sizeof path);
		char *args[] = {path, (char *)sc_raw_arg(raw, sizeof raw), NULL};
		sc_child_report();
		execv(path, args);
		perror(path);
		_exit(127);
	}
	SC_PARENT_AFTER_FORK(do_fork_exec, fds);
	sc_merge_child(fds);
	int ok = reap(pid, "do_fork_exec");
	SC_LEAVE(do_fork_exec);
	return ok;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long r = compute(2) + compute(3);
	int ok = r == 6 + 24;
	ok &= do_fork();
	ok &= do_fork_exec();
	printf("forks: %s\n", ok ? "ok" : "FAILED");
	SC_LEAVE(main);
	return sc_finish(ok ? 0 : 1);
}
