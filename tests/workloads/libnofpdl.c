/*
 * libnofpdl.c - the code `nofp --dl` opens with dlopen once it runs: built like nofp, without
 * frame pointers (Makefile), so that its stacks are whole only when its unwind table was
 * loaded after the process started (the unwinder's mmap side band).
 *
 *   dl_run -> dl_mid -> dl_leaf
 */
#define NOINLINE __attribute__((noinline))

static volatile unsigned long dl_sink;

NOINLINE unsigned long dl_leaf(unsigned long n)
{
	unsigned long x = 7, i;

	for (i = 0; i < n; i++)
		x = (x ^ i) * 0x9e3779b97f4a7c15ULL + (x >> 11);
	return x;
}

NOINLINE unsigned long dl_mid(unsigned long n)
{
	volatile unsigned long pad[64]; /* a frame of its own size */

	pad[0] = n;
	pad[63] = dl_leaf(n);
	return pad[0] + pad[63];
}

unsigned long dl_run(unsigned long n)
{
	dl_sink += dl_mid(n);
	return dl_sink;
}
