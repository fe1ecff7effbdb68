/*
 * deathsig: prints its parent-death signal (prctl PR_GET_PDEATHSIG), which
 * a program started by hand has not: "deathsig: 0". profile record gives
 * the child it launches one for the handover and must take it away before
 * the program runs, or the program would get that signal when profile
 * ends.
 */
#include <stdio.h>
#include <sys/prctl.h>

int main(void)
{
	int sig = -1;
	if (prctl(PR_GET_PDEATHSIG, &sig) != 0) {
		perror("deathsig: prctl");
		return 1;
	}
	printf("deathsig: %d\n", sig);
	return 0;
}
