/* The program's own signals, timers and EINTR: a SIGALRM from an interval
 * timer interrupts a read on an empty pipe (no SA_RESTART: EINTR), the
 * handler counts ticks, and a nanosleep is cut short with its remaining
 * time reported. Prints what it saw; traced or not, the output must match. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t ticks;

__attribute__((noinline)) void on_alarm(int sig) { (void)sig; ticks++; }

__attribute__((noinline)) int blocked_read(int fd)
{
	char c;
	ssize_t n = read(fd, &c, 1);
	return n < 0 ? errno : 0;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm; /* no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	int fds[2];
	if (pipe(fds) != 0)
		return 2;
	struct itimerval it = {{0, 0}, {0, 20000}};
	setitimer(ITIMER_REAL, &it, NULL);
	int err = blocked_read(fds[0]);
	printf("read: %s, ticks=%d\n", err == EINTR ? "EINTR" : strerror(err), (int)ticks);
	setitimer(ITIMER_REAL, &it, NULL);
	struct timespec req = {5, 0}, rem = {0, 0};
	int r = nanosleep(&req, &rem);
	printf("nanosleep: %s, cut short: %s, ticks=%d\n", r != 0 && errno == EINTR ? "EINTR" : "ok",
	       rem.tv_sec >= 4 ? "yes" : "no", (int)ticks);
	return 0;
}
