/* deep: a 2,000-deep recursion that sleeps at the bottom, so that an
 * attach finds every level in flight. Prints "ready" once at the bottom. */
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline, noclone, noipa)) int descend(int n)
{
	if (n == 0) {
		puts("ready");
		fflush(stdout);
		sleep(2);
		return 0;
	}
	return descend(n - 1) + 1;
}

int main(void) { return descend(1999) == 1999 ? 0 : 1; }
