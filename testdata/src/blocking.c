/*
 * blocking: functions that block in the kernel.
 *
 *   main -> nap                      usleep(50000) once
 *   main -> run_prodcons -> pthread_create consumer, producer
 *             producer -> produce_item x5   (slot of one item; waits on a
 *             consumer -> consume_item x5    condition variable when full /
 *                                            empty)
 *   main -> run_pipe -> pthread_create pipe_reader
 *             pipe_reader -> read_message    blocks in read(2) on a pipe
 *             run_pipe: usleep(20000), then write_message
 *
 * Every function runs a fixed number of times whatever the timing: the
 * waiting loops are inside the functions.  Threads: 2 spawned by
 * run_prodcons, 1 by run_pipe, all at level 1.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(nap, "nap")                                                          \
	X(run_prodcons, "run_prodcons")                                        \
	X(producer, "producer")                                                \
	X(consumer, "consumer")                                                \
	X(produce_item, "produce_item")                                        \
	X(consume_item, "consume_item")                                        \
	X(run_pipe, "run_pipe")                                                \
	X(pipe_reader, "pipe_reader")                                          \
	X(read_message, "read_message")                                        \
	X(write_message, "write_message")
#include "selfcheck.h"

#include <pthread.h>

#define ITEMS 5
#define MESSAGE "hello through the pipe"

#define die(what, err)                                                         \
	do {                                                                   \
		fprintf(stderr, "blocking: %s: %s\n", what, strerror(err));    \
		exit(1);                                                       \
	} while (0)

struct targ {
	struct sc_tinfo ti;
	int fd;
	long result;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t cv_empty = PTHREAD_COND_INITIALIZER;
static int slot_full;
static int slot_value;

TRACED void nap(void)
{
	SC_ENTER(nap);
	usleep(50000);
	SC_LEAVE(nap);
}

TRACED void produce_item(int v)
{
	SC_ENTER(produce_item);
	pthread_mutex_lock(&mu);
	while (slot_full)
		pthread_cond_wait(&cv_empty, &mu);
	slot_value = v;
	slot_full = 1;
	pthread_cond_signal(&cv_full);
	pthread_mutex_unlock(&mu);
	SC_LEAVE(produce_item);
}

TRACED int consume_item(void)
{
	SC_ENTER(consume_item);
	pthread_mutex_lock(&mu);
	while (!slot_full)
		pthread_cond_wait(&cv_full, &mu);
	int v = slot_value;
	slot_full = 0;
	pthread_cond_signal(&cv_empty);
	pthread_mutex_unlock(&mu);
	SC_LEAVE(consume_item);
	return v;
}

TRACED void *producer(void *p)
{
	SC_ENTER(producer);
	struct targ *a = (struct targ *)p;
	sc_thread_begin(a->ti);
	for (int i = 1; i <= ITEMS; i++) {
		usleep(2000); /* let the consumer block first */
		produce_item(i);
	}
	SC_LEAVE(producer);
	return NULL;
}

TRACED void *consumer(void *p)
{
	SC_ENTER(consumer);
	struct targ *a = (struct targ *)p;
	sc_thread_begin(a->ti);
	a->result = 0;
	for (int i = 0; i < ITEMS; i++)
		a->result += consume_item();
	SC_LEAVE(consumer);
	return NULL;
}

TRACED long run_prodcons(void)
{
	SC_ENTER(run_prodcons);
	pthread_t tc, tp;
	struct targ ac, ap;
	int err;
	ac.ti = SC_SPAWN_INFO(run_prodcons);
	if ((err = pthread_create(&tc, NULL, consumer, &ac)))
		die("pthread_create", err);
	ap.ti = SC_SPAWN_INFO(run_prodcons);
	if ((err = pthread_create(&tp, NULL, producer, &ap)))
		die("pthread_create", err);
	pthread_join(tp, NULL);
	pthread_join(tc, NULL);
	SC_LEAVE(run_prodcons);
	return ac.result;
}

/* Read exactly len bytes (fewer at EOF); blocks until the writer writes. */
TRACED long read_message(int fd, char *buf, size_t len)
{
	SC_ENTER(read_message);
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	SC_LEAVE(read_message);
	return (long)got;
}

TRACED void *pipe_reader(void *p)
{
	SC_ENTER(pipe_reader);
	struct targ *a = (struct targ *)p;
	char buf[sizeof MESSAGE];
	sc_thread_begin(a->ti);
	long n = read_message(a->fd, buf, sizeof MESSAGE);
	a->result = n == (long)sizeof MESSAGE && memcmp(buf, MESSAGE, n) == 0;
	SC_LEAVE(pipe_reader);
	return NULL;
}

TRACED int write_message(int fd, const char *msg, size_t len)
{
	SC_ENTER(write_message);
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(fd, msg + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	SC_LEAVE(write_message);
	return done == len;
}

TRACED int run_pipe(void)
{
	SC_ENTER(run_pipe);
	int fds[2];
	pthread_t t;
	struct targ a;
	int err;
	if (pipe(fds) != 0)
		die("pipe", errno);
	a.ti = SC_SPAWN_INFO(run_pipe);
	a.fd = fds[0];
	if ((err = pthread_create(&t, NULL, pipe_reader, &a)))
		die("pthread_create", err);
	usleep(20000); /* the reader is blocked in read(2) by now */
	int ok = write_message(fds[1], MESSAGE, sizeof MESSAGE);
	pthread_join(t, NULL);
	close(fds[0]);
	close(fds[1]);
	SC_LEAVE(run_pipe);
	return ok && a.result == 1;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	nap();
	long sum = run_prodcons();
	int pipe_ok = run_pipe();
	int ok = sum == ITEMS * (ITEMS + 1) / 2 && pipe_ok;
	printf("blocking: items sum=%ld, pipe %s\n", sum,
	       pipe_ok ? "ok" : "FAILED");
	SC_LEAVE(main);
	return sc_finish(ok ? 0 : 1);
}
