/*
 * prefork: the server workload as a pre-forking service, a master and its
 * worker processes (the stress suite's and attach --tree's target).
 *
 *   prefork [--port N] [--workers N] [--seconds S]
 *
 * The master opens the listening socket (server.c's, same protocol, so
 * internal/loadgen checks every reply), forks N worker processes (default
 * 2) and serves nothing itself. Each worker serves the socket it
 * inherited with one thread of server.c's worker_thread. Once every
 * worker serves, the master prints "port=NNNN" and "workers=PID,PID,...".
 * At the end each worker prints "worker PID requests=K", the "N" requests
 * it answered. SIGTERM or SIGINT to the master (passed on to the
 * workers), "quit" to a worker (the master then stops the others) or
 * --seconds S elapsed (0: no limit) end it; the master exits 0 once
 * every worker has.
 */
#define SERVER_NO_MAIN
#include "server.c"

#include <sys/wait.h>

#define MAX_WORKERS 16

/* A worker process: serves until stopped, then says how much. */
TRACED int worker_main(int ready)
{
	serving_setup();
	int n = spawn_workers(workers, 1);
	if (write(ready, "r", 1) != 1)
		fail("write");
	close(ready);
	if (n == 1)
		wait_for_stop(0);
	request_stop();
	for (int i = 0; i < n; i++)
		pthread_join(workers[i].thread, NULL);
	printf("worker %d requests=%llu\n", (int)getpid(),
	       __atomic_load_n(&nrequests, __ATOMIC_RELAXED));
	fflush(stdout);
	return n == 1 ? 0 : 1;
}

/* Forks the workers; each tells ready it serves. Returns how many. */
TRACED int spawn_processes(pid_t *pids, int n, int ready)
{
	int started = 0;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			break;
		if (pid == 0)
			_exit(worker_main(ready));
		pids[started++] = pid;
	}
	return started;
}

int main(int argc, char **argv)
{
	long port = 0, nworkers = 2, seconds = 120;
	{
		const char *const names[] = {"--port", "--workers", "--seconds"};
		long *const vals[] = {&port, &nworkers, &seconds};
		if (sc_long_flags(argc, argv, names, vals, 3) != 0 || port < 0 ||
		    port > 65535 || nworkers < 1 || nworkers > MAX_WORKERS ||
		    seconds < 0) {
			fprintf(stderr, "usage: prefork [--port N] [--workers N] "
					"[--seconds S]\n");
			return 2;
		}
	}
	struct sockaddr_in addr;
	open_listener(port, &addr);
	stop_on_signals(); /* the master's; a worker makes its own */

	int ready[2];
	if (pipe(ready) != 0)
		fail("pipe");
	pid_t pids[MAX_WORKERS];
	int n = spawn_processes(pids, (int)nworkers, ready[1]);
	close(ready[1]);
	for (int i = 0; i < n; i++) {
		char c;
		if (read(ready[0], &c, 1) != 1)
			break;
	}
	close(ready[0]);
	printf("port=%d\nworkers=", ntohs(addr.sin_port));
	for (int i = 0; i < n; i++)
		printf(i ? ",%d" : "%d", (int)pids[i]);
	printf("\n");
	fflush(stdout);

	/* Until told to stop, a worker ends (a "quit") or the time is up. */
	double deadline = seconds > 0 ? now() + (double)seconds : 0;
	int alive = n;
	while (alive == n) {
		struct pollfd p = {stop_pipe[0], POLLIN, 0};
		if (poll(&p, 1, 20) > 0)
			break;
		if (deadline > 0 && now() > deadline) {
			fprintf(stderr, "prefork: --seconds %ld elapsed, exiting\n", seconds);
			break;
		}
		int st;
		if (waitpid(-1, &st, WNOHANG) > 0)
			alive--;
	}
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGTERM);
	int code = n == nworkers ? 0 : 1;
	for (;;) {
		int st;
		pid_t w = wait(&st);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			break;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			code = 1;
	}
	return code;
}
