/*
 * inflight: a long-running traced function that is already on the stack
 * when a profiler attaches.
 *
 *   inflight [--steps N] [--seconds S] [--wait-mark]
 *            ("steps=N" is accepted for --steps N)
 *
 *   main -> outer -> long_running -> step (in a loop), then returns;
 *   main -> after (once), then prints the results.
 *
 * long_running prints "ready" (flushed) when it is entered, before its
 * first step, then calls step until one of:
 *   - N steps have been made (--steps N),
 *   - S seconds have passed (--seconds S),
 *   - a line "quit" arrives on stdin,
 *   - stdin reaches end of file, only when neither --steps nor --seconds
 *     is given (the default: run until "quit" or EOF).
 * A line "mark" on stdin records the number of steps made so far and
 * prints "mark steps=K" (flushed; K = steps before the mark); a later
 * "mark" moves the mark.  Other lines are ignored.  stdin is checked every
 * 1024 steps (a poll with no timeout), so a command takes effect at a
 * step boundary.  With --wait-mark, long_running makes no step at all until
 * the first "mark" (it waits in poll, still on the stack); "quit", EOF or
 * the --seconds deadline while waiting end it with 0 steps.
 *
 * At the end main prints, after calling after():
 *   steps=T                 step calls made in total
 *   steps_after_mark=X      step calls made after the last "mark" (only
 *                           printed if a "mark" arrived)
 *   result=<16 hex digits>  depends only on T (each step's result depends
 *                           only on its index; checked against a reference
 *                           computed without calls: exit 1 if it differs)
 * Exit status 0, 1 on a wrong result, 2 on bad arguments.
 *
 * Expected file: the run "inflight --steps=100000" (stdin is not needed;
 * EOF does not end a run with --steps): main 1, outer 1, long_running 1,
 * step 100000, after 1, none recursive.
 *
 * What an attach test should assert (stdin a pipe held open by the test):
 *   1. start "inflight" (busy) or "inflight --wait-mark" (exact), wait for
 *      the "ready" line, attach the profiler;
 *   2. once attached (instrumentation in place), write "mark\n" and wait
 *      for "mark steps=K"; let it run; write "quit\n" (or close stdin);
 *      read steps=T and steps_after_mark=X.
 *   - main, outer and long_running were entered before the attach: they
 *     are in flight, and every step call is seen under main -> outer ->
 *     long_running (the profiler must not lose these frames, nor count
 *     them as new calls made after the attach);
 *   - after: exactly 1 call, under main (it starts after the loop ends);
 *   - step: with --wait-mark no step runs before the mark, so the
 *     profiler's count of step calls is exactly X (== T); in the busy mode
 *     the profiler also sees steps made between the attach and the mark
 *     (and a step may be in flight at the attach), so X <= calls <= T;
 *   - no recursive calls anywhere.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(outer, "outer")                                                      \
	X(long_running, "long_running")                                        \
	X(step, "step")                                                        \
	X(after, "after")
#include "selfcheck.h"

#include <limits.h>
#include <poll.h>
#include <time.h>

#define CHECK_EVERY 1024
#define LINE_MAX_ 256

struct config {
	long steps;     /* -1: no limit */
	long seconds;   /* -1: no limit */
	int wait_mark;
	/* results */
	long done;      /* steps made */
	long mark_at;   /* steps made before the last mark, -1: none */
	unsigned long result;
};

/* stdin, read with read(2) (no stdio buffering behind poll's back). */
static char inbuf[LINE_MAX_];
static size_t inlen;
static int stdin_open = 1;

enum { CMD_NONE, CMD_MARK, CMD_QUIT, CMD_EOF };

SC_INLINE double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One step: MIX_ROUNDS dependent mixing rounds (~100 ns), so that the loop
 * spends its time inside step and a busy run makes millions, not tens of
 * millions, of calls per second. */
#define MIX_ROUNDS 64
SC_INLINE unsigned long step_ref(unsigned long h, unsigned long i)
{
	for (unsigned long k = 0; k < MIX_ROUNDS; k++) {
		h ^= i + k + 0x9e3779b97f4a7c15ul + (h << 6) + (h >> 2);
		h *= 0xff51afd7ed558ccdul;
	}
	return h;
}

/* Waits up to timeout_ms (-1: forever) for stdin and handles what arrived:
 * marks are recorded (at done steps) and acknowledged; returns CMD_QUIT or
 * CMD_EOF if the run must end, CMD_MARK if a mark arrived, else CMD_NONE. */
SC_INLINE int check_stdin(struct config *c, int timeout_ms)
{
	int ret = CMD_NONE;
	if (!stdin_open)
		return CMD_NONE;
	struct pollfd p = {0, POLLIN, 0};
	int r = poll(&p, 1, timeout_ms);
	if (r <= 0)
		return CMD_NONE;
	ssize_t n = read(0, inbuf + inlen, sizeof inbuf - inlen);
	if (n < 0 && errno == EINTR)
		return CMD_NONE;
	if (n <= 0) {
		stdin_open = 0;
		return CMD_EOF;
	}
	inlen += (size_t)n;
	char *nl;
	while (ret != CMD_QUIT && (nl = memchr(inbuf, '\n', inlen))) {
		size_t used = (size_t)(nl - inbuf) + 1;
		*nl = '\0';
		if (nl > inbuf && nl[-1] == '\r')
			nl[-1] = '\0';
		if (strcmp(inbuf, "quit") == 0) {
			ret = CMD_QUIT;
		} else if (strcmp(inbuf, "mark") == 0) {
			c->mark_at = c->done;
			printf("mark steps=%ld\n", c->done);
			fflush(stdout);
			ret = CMD_MARK;
		}
		memmove(inbuf, inbuf + used, inlen - used);
		inlen -= used;
	}
	if (inlen == sizeof inbuf) /* a line too long: drop it */
		inlen = 0;
	return ret;
}

TRACED unsigned long step(unsigned long h, unsigned long i)
{
	SC_ENTER(step);
	for (unsigned long k = 0; k < MIX_ROUNDS; k++) {
		h ^= i + k + 0x9e3779b97f4a7c15ul + (h << 6) + (h >> 2);
		h *= 0xff51afd7ed558ccdul;
		SC_BARRIER();
	}
	SC_LEAVE(step);
	return h;
}

TRACED void long_running(struct config *c)
{
	SC_ENTER(long_running);
	printf("ready\n");
	fflush(stdout);
	/* Without a limit, EOF on stdin ends the run. */
	int eof_ends = c->steps < 0 && c->seconds < 0;
	double deadline = c->seconds >= 0 ? now() + (double)c->seconds : 0;
	unsigned long h = 0;
	int run = 1;
	while (c->wait_mark && run) {
		int ms = -1;
		if (c->seconds >= 0) {
			double left = deadline - now();
			ms = left <= 0 ? 0 : (int)(left * 1000) + 1;
		}
		int cmd = stdin_open ? check_stdin(c, ms) : CMD_EOF;
		if (cmd == CMD_MARK)
			break;
		if (cmd == CMD_QUIT || cmd == CMD_EOF ||
		    (c->seconds >= 0 && now() >= deadline))
			run = 0;
	}
	while (run && (c->steps < 0 || c->done < c->steps)) {
		h = step(h, (unsigned long)c->done);
		c->done++;
		if (c->done % CHECK_EVERY != 0)
			continue;
		if (c->seconds >= 0 && now() >= deadline)
			break;
		int cmd = check_stdin(c, 0);
		if (cmd == CMD_QUIT || (cmd == CMD_EOF && eof_ends))
			break;
	}
	c->result = h;
	SC_LEAVE(long_running);
}

TRACED void outer(struct config *c)
{
	SC_ENTER(outer);
	long_running(c);
	SC_LEAVE(outer);
}

/* Checks the result of the loop: 1 if right. */
TRACED int after(const struct config *c)
{
	SC_ENTER(after);
	unsigned long h = 0;
	for (long i = 0; i < c->done; i++)
		h = step_ref(h, (unsigned long)i);
	int ok = h == c->result;
	if (!ok)
		fprintf(stderr, "inflight: wrong result %016lx, want %016lx\n",
			c->result, h);
	SC_LEAVE(after);
	return ok;
}

#define usage()                                                                \
	do {                                                                   \
		fprintf(stderr, "usage: inflight [--steps N] [--seconds S] "   \
				"[--wait-mark]\n");                            \
		SC_LEAVE(main);                                                \
		return 2;                                                      \
	} while (0)

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	struct config c = {-1, -1, 0, 0, -1, 0};
	{
		/* --wait-mark and steps=N first; the rest are --NAME N flags. */
		int j = 1;
		for (int i = 1; i < argc; i++) {
			if (strcmp(argv[i], "--wait-mark") == 0) {
				c.wait_mark = 1;
			} else if (strncmp(argv[i], "steps=", 6) == 0) {
				char *end;
				c.steps = strtol(argv[i] + 6, &end, 10);
				if (argv[i][6] == '\0' || *end != '\0' ||
				    c.steps < 0)
					usage();
			} else {
				argv[j++] = argv[i];
			}
		}
		argc = j;
		long steps = LONG_MIN, seconds = LONG_MIN;
		const char *const names[] = {"--steps", "--seconds"};
		long *const vals[] = {&steps, &seconds};
		if (sc_long_flags(argc, argv, names, vals, 2) != 0)
			usage();
		if (steps != LONG_MIN) {
			if (steps < 0)
				usage();
			c.steps = steps;
		}
		if (seconds != LONG_MIN) {
			if (seconds < 0)
				usage();
			c.seconds = seconds;
		}
	}

	outer(&c);
	int ok = after(&c);

	printf("steps=%ld\n", c.done);
	if (c.mark_at >= 0)
		printf("steps_after_mark=%ld\n", c.done - c.mark_at);
	printf("result=%016lx\n", c.result);
	SC_LEAVE(main);
	return sc_finish(ok ? 0 : 1);
}
