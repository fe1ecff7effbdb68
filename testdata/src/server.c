/*
 * server: a small multi-threaded TCP server, the target of the stress suite
 * (make stress) and of internal/loadgen.
 *
 *   server [--port N] [--threads N] [--seconds S]
 *          (defaults: an ephemeral port, 4 worker threads, 120 s)
 *
 * It listens on 127.0.0.1 (port 0: any free port) and prints "port=NNNN"
 * on stdout, flushed, once listening.  A fixed pool of worker threads
 * shares one epoll set: each waits for one ready socket at a time
 * (EPOLLONESHOT, so a connection is served by one worker at a time), reads
 * what it can and answers every complete line; the listening socket is in
 * the same set, so any worker accepts.  Many concurrent connections work.
 *
 * Protocol, one line per request:
 *   "N\n"     N an integer 0..1000000: the reply is "N RESULT\n"
 *   "quit\n"  the reply is "bye\n", then the server exits
 *   other     the reply is "error\n"
 * RESULT = compute(N), in decimal, with
 *   compute(n) = hash_mix(n, fib(n % 16))   (64-bit unsigned arithmetic)
 * internal/loadgen holds the Go twin of compute and checks every reply.
 *
 * Calls per answered request "N" (k = N % 16), whichever worker serves it:
 *   handle_request 1, parse_request 1, compute 1, hash_mix 1, mix_round 1,
 *   finish 1, mix_final 1, format_reply 1, fib 2*F(k+1)-1 (F(1) = F(2) =
 *   1), of which all but the first are recursive.  hash_mix's last steps
 *   are shapes an inline probe's jump cannot take at the entry:
 *   mix_round (assembly, returns its argument) loops back into its first
 *   5 bytes, and is called only directly (a profiler may probe its call
 *   site); finish is a forwarding function whose whole body is a load and
 *   an indirect tail jump (jmp *(%rdi)) to mix_final, which returns its
 *   argument.  Those two are counted at their call sites.  A line that is not a number costs handle_request
 *   and parse_request only; "quit" costs none of these.  The other
 *   functions (worker_thread, serve_ready, accept_conns, ...) run a
 *   timing-dependent number of times.
 *
 * Exit: "quit", SIGTERM or SIGINT, or --seconds S elapsed (a safety net so
 * that a failed test never leaves it running; 0 means no limit) all end the
 * same way: the workers stop, and the server prints on stdout
 *   requests=N                      the number of "N" requests answered
 *   counter NAME CALLS RECURSIVE    one line per function (self-counted)
 * and exits with status 0.  Like every workload, --selfcheck[=PATH] also
 * writes the JSON self-check report.  Nothing depends on timing: traced or
 * not, the same requests get the same replies and the same counts.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(spawn_workers, "spawn_workers")                                      \
	X(worker_thread, "worker_thread")                                      \
	X(accept_conns, "accept_conns")                                        \
	X(serve_ready, "serve_ready")                                          \
	X(send_all, "send_all")                                                \
	X(handle_request, "handle_request")                                    \
	X(parse_request, "parse_request")                                      \
	X(compute, "compute")                                                  \
	X(fib, "fib")                                                          \
	X(hash_mix, "hash_mix")                                                \
	X(mix_round, "mix_round")                                              \
	X(finish, "finish")                                                    \
	X(mix_final, "mix_final")                                              \
	X(format_reply, "format_reply")                                        \
	X(wait_for_stop, "wait_for_stop")                                      \
	X(on_signal, "on_signal")
#define _GNU_SOURCE /* accept4, pipe2 */
#include "selfcheck.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#define MAX_THREADS 64
#define MAX_LINE 64
#define MAX_N 1000000L
#define REPLY_TIMEOUT_MS 5000

/* A connection: lines accumulate in buf until a newline. */
struct conn {
	int fd;
	size_t len;
	char buf[MAX_LINE + 1];
};

struct worker {
	struct sc_tinfo ti;
	pthread_t thread;
};

static int epfd = -1, listen_fd = -1;
static int stop_pipe[2] = {-1, -1};
static unsigned long long nrequests;
/* The epoll tags of the listening socket and of the stop pipe. */
static char listen_tag, stop_tag;

#define fail(what)                                                             \
	do {                                                                   \
		fprintf(stderr, "server: %s: %s\n", what, strerror(errno));    \
		exit(1);                                                       \
	} while (0)

/* Ends the server: the stop pipe becomes readable for good (level-triggered
 * in every worker's epoll_wait, and polled by main). */
#define request_stop()                                                         \
	do {                                                                   \
		ssize_t w_ = write(stop_pipe[1], "x", 1);                      \
		(void)w_;                                                      \
	} while (0)

SC_INLINE double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

TRACED void on_signal(int sig)
{
	SC_ENTER(on_signal);
	int saved = errno;
	(void)sig;
	request_stop();
	errno = saved;
	SC_LEAVE(on_signal);
}

TRACED unsigned long fib(unsigned long k)
{
	SC_ENTER(fib);
	unsigned long r = k < 2 ? k : fib(k - 1) + fib(k - 2);
	SC_LEAVE(fib);
	return r;
}

/* unsigned long mix_round(unsigned long h): returns h; its loop jumps
 * back to +2, inside its first 5 bytes. */
__asm__(".pushsection .text\n"
	".globl mix_round\n"
	".type mix_round, @function\n"
	".p2align 4\n"
	"mix_round:\n"
	".cfi_startproc\n"
	"\txorl %ecx, %ecx\n"
	"1:\n"
	"\taddl $1, %ecx\n"
	"\tcmpl $3, %ecx\n"
	"\tjl 1b\n"
	"\tmovq %rdi, %rax\n"
	"\tret\n"
	".cfi_endproc\n"
	".size mix_round, . - mix_round\n"
	".popsection\n");
unsigned long mix_round(unsigned long h);

struct mixer {
	unsigned long (*fn)(unsigned long);
};

TRACED unsigned long mix_final(unsigned long h)
{
	SC_ENTER(mix_final);
	SC_BARRIER();
	SC_LEAVE(mix_final);
	return h;
}

static const struct mixer final_mixer = {mix_final};

/* A forwarder: a tail call through the mixer (jmp *(%rdi)), nothing else. */
__attribute__((noinline, noclone, optimize("optimize-sibling-calls")))
unsigned long finish(const struct mixer *m, unsigned long h)
{
	return m->fn(h);
}

TRACED unsigned long hash_mix(unsigned long n, unsigned long f)
{
	SC_ENTER(hash_mix);
	unsigned long h = n * 0x9e3779b97f4a7c15ul ^ f;
	for (unsigned long i = 0; i < 256; i++) {
		h ^= h >> 31;
		h *= 0xbf58476d1ce4e5b9ul;
		h += i;
		SC_BARRIER();
	}
	/* Assembly and a bare forwarder: counted here. */
	SC_ENTER(mix_round);
	h = mix_round(h);
	SC_LEAVE(mix_round);
	SC_ENTER(finish);
	h = finish(&final_mixer, h);
	SC_LEAVE(finish);
	SC_LEAVE(hash_mix);
	return h;
}

TRACED unsigned long compute(unsigned long n)
{
	SC_ENTER(compute);
	unsigned long r = hash_mix(n, fib(n % 16));
	SC_LEAVE(compute);
	return r;
}

/* 1 and *n set for a number 0..MAX_N, 0 for anything else. */
TRACED int parse_request(const char *line, unsigned long *n)
{
	SC_ENTER(parse_request);
	unsigned long v = 0;
	int ok = *line != '\0';
	for (const char *s = line; *s && ok; s++) {
		if (*s < '0' || *s > '9' || s - line >= 7)
			ok = 0;
		else
			v = v * 10 + (unsigned long)(*s - '0');
	}
	if (ok && v > (unsigned long)MAX_N)
		ok = 0;
	*n = v;
	SC_LEAVE(parse_request);
	return ok;
}

TRACED int format_reply(char *out, size_t len, unsigned long n,
			unsigned long result)
{
	SC_ENTER(format_reply);
	int r = snprintf(out, len, "%lu %lu\n", n, result);
	SC_LEAVE(format_reply);
	return r;
}

/* Answers one request line (without its newline) into out. */
TRACED int handle_request(const char *line, char *out, size_t len)
{
	SC_ENTER(handle_request);
	unsigned long n;
	int r;
	if (parse_request(line, &n)) {
		r = format_reply(out, len, n, compute(n));
		__atomic_add_fetch(&nrequests, 1, __ATOMIC_RELAXED);
	} else {
		r = snprintf(out, len, "error\n");
	}
	SC_LEAVE(handle_request);
	return r;
}

/* Writes all of buf to a non-blocking socket; 0 on success. */
TRACED int send_all(int fd, const char *buf, size_t len)
{
	SC_ENTER(send_all);
	int ret = 0;
	while (len > 0) {
		ssize_t w = send(fd, buf, len, MSG_NOSIGNAL);
		if (w > 0) {
			buf += w;
			len -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd p = {fd, POLLOUT, 0};
			int pr = poll(&p, 1, REPLY_TIMEOUT_MS);
			if (pr > 0 || (pr < 0 && errno == EINTR))
				continue;
		}
		ret = -1;
		break;
	}
	SC_LEAVE(send_all);
	return ret;
}

/* Reads what a ready connection has and answers each complete line.
 * Returns 1 to keep the connection, 0 to close it, 2 after "quit". */
TRACED int serve_ready(struct conn *c)
{
	SC_ENTER(serve_ready);
	int keep = 1;
	char reply[128];
	for (;;) {
		ssize_t r = read(c->fd, c->buf + c->len, MAX_LINE - c->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (r <= 0) { /* EOF or error */
			keep = 0;
			break;
		}
		c->len += (size_t)r;
		char *nl;
		while (keep == 1 && (nl = memchr(c->buf, '\n', c->len))) {
			size_t used = (size_t)(nl - c->buf) + 1;
			*nl = '\0';
			if (nl > c->buf && nl[-1] == '\r')
				nl[-1] = '\0';
			if (strcmp(c->buf, "quit") == 0) {
				send_all(c->fd, "bye\n", 4);
				keep = 2;
			} else {
				int n = handle_request(c->buf, reply,
						       sizeof reply);
				if (send_all(c->fd, reply, (size_t)n) != 0)
					keep = 0;
			}
			memmove(c->buf, c->buf + used, c->len - used);
			c->len -= used;
		}
		if (keep != 1)
			break;
		if (c->len == MAX_LINE) { /* a line too long: refuse it */
			send_all(c->fd, "error\n", 6);
			keep = 0;
			break;
		}
	}
	SC_LEAVE(serve_ready);
	return keep;
}

/* Accepts every pending connection into the epoll set. */
TRACED void accept_conns(void)
{
	SC_ENTER(accept_conns);
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				fprintf(stderr, "server: accept: %s\n",
					strerror(errno));
			break;
		}
		struct conn *c = calloc(1, sizeof *c);
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT,
					 .data.ptr = c};
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			fprintf(stderr, "server: epoll_ctl: %s\n",
				strerror(errno));
			close(fd);
			free(c);
		}
	}
	SC_LEAVE(accept_conns);
}

TRACED void *worker_thread(void *p)
{
	SC_ENTER(worker_thread);
	struct worker *w = (struct worker *)p;
	sc_thread_begin(w->ti);
	for (;;) {
		struct epoll_event ev;
		int n = epoll_wait(epfd, &ev, 1, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "server: epoll_wait: %s\n",
				strerror(errno));
			request_stop();
			break;
		}
		if (n == 0)
			continue;
		if (ev.data.ptr == &stop_tag)
			break;
		if (ev.data.ptr == &listen_tag) {
			accept_conns();
			struct epoll_event re = {.events = EPOLLIN | EPOLLONESHOT,
						 .data.ptr = &listen_tag};
			epoll_ctl(epfd, EPOLL_CTL_MOD, listen_fd, &re);
			continue;
		}
		struct conn *c = (struct conn *)ev.data.ptr;
		int keep = serve_ready(c);
		if (keep == 1) {
			struct epoll_event re = {.events = EPOLLIN | EPOLLONESHOT,
						 .data.ptr = c};
			if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &re) == 0)
				continue;
		}
		epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		free(c);
		if (keep == 2)
			request_stop();
	}
	SC_LEAVE(worker_thread);
	return NULL;
}

TRACED int spawn_workers(struct worker *w, int n)
{
	SC_ENTER(spawn_workers);
	int started = 0;
	for (int i = 0; i < n; i++) {
		w[i].ti = SC_SPAWN_INFO(spawn_workers);
		int err = pthread_create(&w[i].thread, NULL, worker_thread, &w[i]);
		if (err) {
			fprintf(stderr, "server: pthread_create: %s\n",
				strerror(err));
			break;
		}
		started++;
	}
	SC_LEAVE(spawn_workers);
	return started;
}

/* Waits until the stop pipe is readable or the deadline (0: none) passes;
 * returns 1 if the deadline passed. */
TRACED int wait_for_stop(double deadline)
{
	SC_ENTER(wait_for_stop);
	int timed_out = 0;
	for (;;) {
		int ms = -1;
		if (deadline > 0) {
			double left = deadline - now();
			if (left <= 0) {
				timed_out = 1;
				break;
			}
			ms = (int)(left * 1000) + 1;
		}
		struct pollfd p = {stop_pipe[0], POLLIN, 0};
		int r = poll(&p, 1, ms);
		if (r > 0)
			break;
		if (r < 0 && errno != EINTR)
			fail("poll");
	}
	SC_LEAVE(wait_for_stop);
	return timed_out;
}

/* The listening socket on 127.0.0.1:port (0: any free port), non-blocking;
 * addr gets its address. */
static void open_listener(long port, struct sockaddr_in *addr)
{
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		fail("socket");
	int one = 1;
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(addr, 0, sizeof *addr);
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr->sin_port = htons((unsigned short)port);
	if (bind(listen_fd, (struct sockaddr *)addr, sizeof *addr) != 0)
		fail("bind");
	if (listen(listen_fd, 512) != 0)
		fail("listen");
	socklen_t alen = sizeof *addr;
	if (getsockname(listen_fd, (struct sockaddr *)addr, &alen) != 0)
		fail("getsockname");
}

/* The stop pipe, and SIGTERM and SIGINT handled by on_signal (a forked
 * process makes its own). */
static void stop_on_signals(void)
{
	if (pipe2(stop_pipe, O_CLOEXEC) != 0)
		fail("pipe");
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* stop_on_signals, and the epoll set of the listening socket and the stop
 * pipe: a serving process's own (a forked worker makes its own). */
static void serving_setup(void)
{
	stop_on_signals();
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		fail("epoll_create1");
	struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT,
				 .data.ptr = &listen_tag};
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd, &ev) != 0)
		fail("epoll_ctl");
	struct epoll_event sev = {.events = EPOLLIN, .data.ptr = &stop_tag};
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, stop_pipe[0], &sev) != 0)
		fail("epoll_ctl");
}

static struct worker workers[MAX_THREADS];

#ifndef SERVER_NO_MAIN
#define usage()                                                                \
	do {                                                                   \
		fprintf(stderr, "usage: server [--port N] [--threads N] "      \
				"[--seconds S]\n");                            \
		SC_LEAVE(main);                                                \
		return 2;                                                      \
	} while (0)

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long port = 0, nthreads = 4, seconds = 120;
	{
		const char *const names[] = {"--port", "--threads", "--seconds"};
		long *const vals[] = {&port, &nthreads, &seconds};
		if (sc_long_flags(argc, argv, names, vals, 3) != 0)
			usage();
	}
	if (port < 0 || port > 65535 || nthreads < 1 ||
	    nthreads > MAX_THREADS || seconds < 0)
		usage();

	struct sockaddr_in addr;
	open_listener(port, &addr);
	serving_setup();

	int n = spawn_workers(workers, (int)nthreads);
	int code = n == nthreads ? 0 : 1;
	if (code == 0) {
		printf("port=%d\n", ntohs(addr.sin_port));
		fflush(stdout);
		double deadline = seconds > 0 ? now() + (double)seconds : 0;
		if (wait_for_stop(deadline))
			fprintf(stderr, "server: --seconds %ld elapsed, exiting\n",
				seconds);
	}
	request_stop();
	for (int i = 0; i < n; i++)
		pthread_join(workers[i].thread, NULL);

	printf("requests=%llu\n",
	       __atomic_load_n(&nrequests, __ATOMIC_RELAXED));
	for (int i = 0; i < SC_NFUNCS; i++)
		printf("counter %s %llu %llu\n", sc_func_names[i],
		       __atomic_load_n(&sc_calls[i], __ATOMIC_RELAXED),
		       __atomic_load_n(&sc_recs[i], __ATOMIC_RELAXED));
	fflush(stdout);
	SC_LEAVE(main);
	return sc_finish(code);
}
#endif
