/*
 * heapsteps.c - known steps of the heap in use, for the memory source of the timeline: after
 * the go byte (--wait), exactly these calls and no other allocation:
 *   a = malloc(1 MiB)        in use 1 MiB      (large)
 *   b = calloc(3, 1 MiB)     in use 4 MiB      (large)
 *   s = malloc(100)          in use 4 MiB + 100
 *   free(a)                  in use 3 MiB + 100
 *   c = malloc(2 MiB)        in use 5 MiB + 100 (large: the peak)
 *   free(s), free(b), free(c): in use 0
 * then it writes "done" with write() (no stdio: its buffer would be an allocation). Every
 * block is touched, so that the allocator cannot leave it out.
 *
 *   heapsteps [--wait]
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB (1024 * 1024)

int main(int argc, char **argv)
{
	char go, *a, *b, *s, *c;

	if (argc > 1 && !strcmp(argv[1], "--wait") && read(0, &go, 1) != 1)
		return 2;
	a = malloc(MIB);
	b = calloc(3, MIB);
	s = malloc(100);
	if (!a || !b || !s)
		return 3;
	a[0] = b[0] = s[0] = 1;
	free(a);
	c = malloc(2 * MIB);
	if (!c)
		return 3;
	c[0] = 1;
	free(s);
	free(b);
	free(c);
	return write(1, "done\n", 5) == 5 ? 0 : 4;
}
