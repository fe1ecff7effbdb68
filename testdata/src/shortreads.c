/*
 * shortreads: many short waiting calls. pull reads one byte of /dev/zero
 * (read(2), a waiting call that returns at once), N times (its argument);
 * it prints "shortreads: N bytes".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline, noclone, noipa)) static long pull(int fd)
{
	char c;
	return read(fd, &c, 1);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: shortreads N\n");
		return 2;
	}
	long n = atol(argv[1]), got = 0;
	int fd = open("/dev/zero", O_RDONLY);
	if (fd < 0) {
		perror("shortreads: /dev/zero");
		return 1;
	}
	for (long i = 0; i < n; i++)
		got += pull(fd);
	printf("shortreads: %ld bytes\n", got);
	return 0;
}
