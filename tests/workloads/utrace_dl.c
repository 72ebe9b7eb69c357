/*
 * utrace_dl.c - a workload that maps libwl.so only after its go byte (dlopen, from its own
 * directory) and then calls wl_lib_work 5 times: the UTrace tests probe a library that no
 * process mapped when the probes were placed.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char self[PATH_MAX], lib[PATH_MAX + 16], *slash, c;
	long (*work)(long);
	ssize_t n;
	void *h;
	int i;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || read(0, &c, 1) != 1)
		return 1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	snprintf(lib, sizeof(lib), "%s/libwl.so", self);
	h = dlopen(lib, RTLD_NOW);
	if (!h)
		return 2;
	work = (long (*)(long))dlsym(h, "wl_lib_work");
	if (!work)
		return 3;
	for (i = 0; i < 5; i++)
		work(10);
	return 0;
}
