/*
 * pages - touches N fresh anonymous pages (one write each): at least N page faults, in
 * this process and in each of C children (forked after --wait releases it).
 *
 *   pages [--pages N] [--children C] [--wait]
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long pages = 1000, i, psize = sysconf(_SC_PAGESIZE);
	int wait_go = 0, children = 0, c;
	char *mem, go;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pages") && i + 1 < argc)
			pages = atol(argv[++i]);
		else if (!strcmp(argv[i], "--children") && i + 1 < argc)
			children = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--wait"))
			wait_go = 1;
	}
	/* mapped before the go signal; faulted in after it */
	mem = mmap(NULL, (size_t)(pages * psize), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 2;
	madvise(mem, (size_t)(pages * psize), MADV_NOHUGEPAGE);
	if (wait_go && read(0, &go, 1) != 1)
		return 3;
	/* children get the mapping untouched: each one faults its own copy in */
	for (c = 0; c < children; c++) {
		if (fork() == 0) {
			for (i = 0; i < pages; i++)
				mem[i * psize] = 1;
			_exit(0);
		}
	}
	for (i = 0; i < pages; i++)
		mem[i * psize] = 1;
	while (wait(NULL) > 0)
		;
	return 0;
}
