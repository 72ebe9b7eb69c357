/*
 * utrace_testutil.h - what the UTrace tests share: the facts binutils tells about a workload
 * (a symbol's address from nm, a function's return instructions from objdump, the .text
 * section's address-to-file-offset delta), to compare probe addresses with.
 */
#ifndef KPERF_UTRACE_TESTUTIL_H
#define KPERF_UTRACE_TESTUTIL_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* absolute path of the build artefact <rel> ("workloads/utrace_wl") into <buf> */
static inline const char *ut_artefact(const char *rel, char *buf)
{
	if (!realpath(tu_path(rel), buf))
		buf[0] = '\0';
	return buf;
}

/* the link-time address of <sym> in <bin> (nm), 0 when absent */
static inline unsigned long ut_nm(const char *bin, const char *sym)
{
	char cmd[PATH_MAX + 64], *out, *line, *save = NULL;
	unsigned long v = 0, a;
	char type, name[512];

	snprintf(cmd, sizeof(cmd), "nm '%s' 2>/dev/null", bin);
	out = tu_run(cmd, NULL);
	for (line = out ? strtok_r(out, "\n", &save) : NULL; line && !v;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%lx %c %511s", &a, &type, name) == 3 && !strcmp(name, sym))
			v = a;
	free(out);
	return v;
}

/* .text's address minus its file offset (objdump -h): file offset = address - delta */
static inline unsigned long ut_text_delta(const char *bin)
{
	char cmd[PATH_MAX + 64], *out, *line, *save = NULL;
	unsigned long size, vma, lma, off, delta = ~0UL;
	char name[64];
	int idx;

	snprintf(cmd, sizeof(cmd), "objdump -h '%s' 2>/dev/null", bin);
	out = tu_run(cmd, NULL);
	for (line = out ? strtok_r(out, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%d %63s %lx %lx %lx %lx", &idx, name, &size, &vma, &lma, &off) ==
			    6 &&
		    !strcmp(name, ".text"))
			delta = vma - off;
	free(out);
	return delta;
}

/* the link-time addresses of the return instructions of <func> in <bin> (objdump -d);
 * returns their number (at most <max>) */
static inline int ut_objdump_rets(const char *bin, const char *func, unsigned long *out, int max)
{
	char cmd[PATH_MAX + 128], *text, *line, *save = NULL, want[256];
	int n = 0, in = 0;

	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn '%s' 2>/dev/null", bin);
	snprintf(want, sizeof(want), "<%s>:", func);
	text = tu_run(cmd, NULL);
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');

		if (strstr(line, want)) {
			in = 1;
			continue;
		}
		if (in && strstr(line, ">:"))
			break; /* the next function (strtok_r skips the blank line) */
		if (!in || !tab)
			continue;
		tab++;
		if (!strncmp(tab, "repz ", 5) || !strncmp(tab, "bnd ", 4))
			tab = strchr(tab, ' ') + 1;
		if (!strncmp(tab, "ret", 3) && n < max)
			out[n++] = strtoul(line, NULL, 16);
	}
	free(text);
	return n;
}

#endif
