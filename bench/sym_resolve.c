/*
 * sym_resolve.c - throughput of the symbol resolver, printed as ratios.
 *
 * Resolves N addresses (default one million) spread evenly over the kernel's text, libc's text
 * and a workload's text (sym_hot), first cold (caches empty: kallsyms, libc and the workload
 * are parsed inside the timing) then warm (the same addresses again), with and without DWARF
 * lines; then whole stacks through StackToHash. The user addresses are then compared with
 * binutils' addr2line and elfutils' eu-addr2line on a sample: addresses per second for each,
 * the ratio, and how often the function names and lines agree.
 *
 * Then inline frames (sym_inline.c): the same addresses of libc (with its debug file) and of
 * the -O2 C++ workload resolved with every inlined call, by kperf-bpf, `addr2line -f -i -C`
 * and `llvm-symbolizer --inlining`, each cold in a new process (this program runs itself with
 * --resolve, as a symbolizer would be run) and warm (ours: the same addresses again in the
 * process; theirs: a second run, files in the page cache); and the fixed cost of opening
 * libc's debug file, with libdeflate and with zlib.
 *
 * What runs in this process is timed in CPU time, the commands by the CPU time of the child
 * (user + system), and the new processes of the inline comparison also by their median wall
 * time: on a shared machine the wall clock counts the time others had the CPU too.
 *
 *   sym_resolve [N] [SAMPLE]       ($KPERF_BUILD locates the workload, default ./build)
 *   sym_resolve --resolve MODULE   file addresses on stdin, their frames on stdout
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kperf/kperf.h"
#include "kperf/pcerrc.h"
#include "kperf/symbol.h"
#include "sym/sym.h"

struct range {
	unsigned long start, end;
	char path[4096];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The work done in this process is timed in CPU time: the machine a benchmark runs on is
 * often shared, and a wall clock then also counts the time others had the CPU. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double children_cpu_s(void)
{
	struct rusage r;

	getrusage(RUSAGE_CHILDREN, &r);
	return (double)r.ru_utime.tv_sec + (double)r.ru_stime.tv_sec +
	       ((double)r.ru_utime.tv_usec + (double)r.ru_stime.tv_usec) / 1e6;
}

static uint64_t rng_state = 12345;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* start the workload, wait for its "ready"; its stdin stays open until we close *in; what it
 * printed goes to buf */
static pid_t start_workload(const char *path, int *in, char *buf, size_t size)
{
	int pin[2], pout[2];
	size_t n = 0;
	pid_t pid;

	if (pipe(pin) || pipe(pout))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pin[0], 0);
		dup2(pout[1], 1);
		close(pin[1]);
		close(pout[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	buf[0] = '\0';
	while (n + 1 < size) {
		struct pollfd pfd = { pout[0], POLLIN, 0 };
		ssize_t r;

		if (poll(&pfd, 1, 10000) <= 0)
			break;
		r = read(pout[0], buf + n, size - n - 1);
		if (r <= 0)
			break;
		n += (size_t)r;
		buf[n] = '\0';
		if (strstr(buf, "ready\n"))
			break;
	}
	close(pout[0]);
	*in = pin[1];
	return strstr(buf, "ready\n") ? pid : -1;
}

/* the executable mapping of the file whose path contains <needle> */
static int find_text(pid_t pid, const char *needle, struct range *r)
{
	char path[64], line[4608];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char perms[8], name[4096] = "";

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095s", &r->start, &r->end, perms,
			   name) == 4 &&
		    perms[2] == 'x' && strstr(name, needle)) {
			snprintf(r->path, sizeof(r->path), "%s", name);
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -1;
}

/* the .text section of the workload, at run time: where its functions are (the rest of its
 * executable page is padding that resolves to [unknown]) */
static int workload_text(const char *bin, const char *printed, struct range *r)
{
	char cmd[8400], line[512];
	unsigned long hot = 0, link = 0, vaddr = 0, size = 0;
	const char *p = strstr(printed, "hot_loop=");
	FILE *f;

	if (p)
		hot = strtoul(p + 9, NULL, 16);
	snprintf(cmd, sizeof(cmd),
		 "nm '%s' | grep ' hot_loop$'; readelf -SW '%s' | grep ' \\.text '", bin, bin);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *t = strstr(line, ".text ");

		if (strstr(line, " hot_loop"))
			link = strtoul(line, NULL, 16);
		else if (t && sscanf(t, ".text %*s %lx %*s %lx", &vaddr, &size) != 2)
			size = 0;
	}
	pclose(f);
	if (!hot || !link || !size)
		return -1;
	r->start = hot - link + vaddr;
	r->end = r->start + size;
	return 0;
}

static int kernel_text(struct range *r)
{
	char line[512];
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return -1;
	r->start = r->end = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, " T _stext\n"))
			r->start = strtoul(line, NULL, 16);
		else if (strstr(line, " T _etext\n"))
			r->end = strtoul(line, NULL, 16);
	}
	fclose(f);
	snprintf(r->path, sizeof(r->path), "[kernel.kallsyms]");
	return r->start && r->end > r->start ? 0 : -1;
}

static int cmp_ul(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

static size_t distinct(const unsigned long *v, size_t n)
{
	unsigned long *c = malloc(n * sizeof(*c));
	size_t i, d = 0;

	if (!c)
		return 0;
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_ul);
	for (i = 0; i < n; i++)
		d += i == 0 || c[i] != c[i - 1];
	free(c);
	return d;
}

/* resolve all; returns the time taken, or -1 */
static double resolve_all(pid_t pid, const unsigned long *addrs, size_t n, bool dwarf,
			  size_t *unknown)
{
	double t0 = cpu_s();
	size_t i;

	*unknown = 0;
	if (SymResolverRecordKernel() ||
	    (dwarf ? SymResolverRecordModule(pid) : SymResolverRecordModuleNoDwarf(pid))) {
		fprintf(stderr, "sym_resolve: record failed: %s\n", Perror());
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct Symbol *s = SymResolverMapAddr(pid, addrs[i]);

		if (!s) {
			fprintf(stderr, "sym_resolve: %#lx: %s\n", addrs[i], Perror());
			return -1;
		}
		*unknown += !strcmp(s->symbolName, "[unknown]");
	}
	return cpu_s() - t0;
}

/* the CPU time of a command (user + system); -1 when it failed */
static double run_cmd_timed(const char *cmd)
{
	double t0 = children_cpu_s();
	int st = system(cmd);

	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return children_cpu_s() - t0;
}

/* the function name addr2line printed, without " (discriminator N)" or "??" */
struct a2l {
	char func[512];
	char line[4096];
};

static int read_a2l(const char *path, struct a2l *out, size_t n)
{
	FILE *f = fopen(path, "r");
	size_t i;

	if (!f)
		return -1;
	for (i = 0; i < n; i++) {
		char *p;

		if (!fgets(out[i].func, sizeof(out[i].func), f) ||
		    !fgets(out[i].line, sizeof(out[i].line), f))
			break;
		out[i].func[strcspn(out[i].func, "\n")] = '\0';
		out[i].line[strcspn(out[i].line, "\n")] = '\0';
		p = strstr(out[i].line, " (discriminator");
		if (p)
			*p = '\0';
		/* eu-addr2line adds ":column"; "file:?" is no line */
		p = strrchr(out[i].line, ':');
		if (p && p[1] == '?')
			snprintf(out[i].line, sizeof(out[i].line), "??");
		else if (p && p > out[i].line) {
			char *q = p - 1;

			while (q > out[i].line && *q >= '0' && *q <= '9')
				q--;
			if (*q == ':' && q < p - 1)
				*p = '\0'; /* file:line:col */
		}
	}
	fclose(f);
	return i == n ? 0 : -1;
}

static void compare_tool(const char *tool, const char *module, const unsigned long *file_addrs,
			 struct Symbol **ours, size_t n, double ours_s, int *name_ok, int *line_ok,
			 int *line_total, double *tool_s)
{
	char in[] = "/tmp/kperf-bench-a2l-in-XXXXXX", out[64], cmd[9000];
	struct a2l *res = calloc(n, sizeof(*res));
	FILE *f;
	int fd = mkstemp(in);
	size_t i;

	(void)ours_s;
	*tool_s = -1;
	if (fd < 0 || !res) {
		free(res);
		return;
	}
	f = fdopen(fd, "w");
	for (i = 0; i < n; i++)
		fprintf(f, "%#lx\n", file_addrs[i]);
	fclose(f);
	snprintf(out, sizeof(out), "%s.out", in);
	snprintf(cmd, sizeof(cmd), "%s -f -C -e '%s' < '%s' > '%s' 2>/dev/null", tool, module, in,
		 out);
	*tool_s = run_cmd_timed(cmd);
	if (*tool_s >= 0 && read_a2l(out, res, n) == 0) {
		for (i = 0; i < n; i++) {
			char ours_line[4200];

			/* addr2line prints "name" or "??"; eu-addr2line the same */
			bool nok = !strcmp(res[i].func, ours[i]->symbolName) ||
				   (!strcmp(res[i].func, "??") &&
				    !strcmp(ours[i]->symbolName, "[unknown]"));

			*name_ok += nok;
			snprintf(ours_line, sizeof(ours_line), "%s:%u", ours[i]->fileName,
				 ours[i]->lineNum);
			if (strncmp(res[i].line, "??", 2)) {
				(*line_total)++;
				*line_ok += !strcmp(ours_line, res[i].line);
			}
			if (getenv("SYM_BENCH_DEBUG") && (!nok || (strncmp(res[i].line, "??", 2) &&
								   strcmp(ours_line, res[i].line))))
				fprintf(stderr, "%s %#lx: %s %s | ours %s %s+%#lx\n", tool,
					file_addrs[i], res[i].func, res[i].line,
					ours[i]->symbolName, ours_line, ours[i]->offset);
		}
	}
	unlink(in);
	unlink(out);
	free(res);
}

/* ---- inline frames against addr2line -i and llvm-symbolizer --inlining ---- */

static const struct KperfSymOpts inline_opts = { sizeof(struct KperfSymOpts), 1, 1 };

/* --resolve: a symbolizer's loop, frames in llvm-symbolizer's shape */
static int resolve_stdin(const char *module)
{
	char line[256];

	while (fgets(line, sizeof(line), stdin)) {
		const struct Stack *st =
			KperfMapCodeFrames(module, strtoul(line, NULL, 0), &inline_opts);

		for (; st; st = st->next)
			printf("%s\n%s:%u\n", st->symbol->symbolName, st->symbol->fileName,
			       st->symbol->lineNum);
		printf("\n");
	}
	return 0;
}

#define SYM_ROUNDS 7

/* Commands with addresses on their stdin, run in <rounds> interleaved rounds (each round runs
 * each command once, so that the load of this shared machine weighs on all alike): for each
 * the median wall time and the least CPU time (user + system, of the child) in seconds; -1
 * when it failed. */
static void run_symbolizers(char cmd[][4400], int ncmd, const char *in, int rounds, double *wall,
			    double *cpu)
{
	double w[3][SYM_ROUNDS];
	char full[16384];
	int r, t, i, j;

	for (t = 0; t < ncmd; t++)
		wall[t] = cpu[t] = 0;
	for (r = 0; r < rounds && r < SYM_ROUNDS; r++)
		for (t = 0; t < ncmd && t < 3; t++) {
			double c, t0 = now_s();

			if (cpu[t] < 0)
				continue;
			snprintf(full, sizeof(full), "%s < '%s' > /dev/null 2>&1", cmd[t], in);
			c = run_cmd_timed(full);
			w[t][r] = now_s() - t0;
			if (c < 0)
				wall[t] = cpu[t] = -1;
			else if (!r || c < cpu[t])
				cpu[t] = c;
		}
	for (t = 0; t < ncmd && t < 3; t++) {
		if (cpu[t] < 0)
			continue;
		for (i = 1; i < rounds; i++) /* sort the few walls for their median */
			for (j = i; j > 0 && w[t][j] < w[t][j - 1]; j--) {
				double x = w[t][j];

				w[t][j] = w[t][j - 1];
				w[t][j - 1] = x;
			}
		wall[t] = w[t][rounds / 2];
	}
}

/* <n> addresses inside the functions of <module> (nm -S of its .dynsym, or its .symtab) */
static size_t function_addrs(const char *module, unsigned long *out, size_t n, bool dynamic)
{
	unsigned long(*fn)[2] = malloc(65536 * sizeof(*fn)), a, sz;
	char cmd[4200], line[1024], type;
	size_t k = 0, i;
	FILE *f;

	if (!fn)
		return 0;
	snprintf(cmd, sizeof(cmd), "nm -S --defined-only %s '%s' 2>/dev/null", dynamic ? "-D" : "",
		 module);
	f = popen(cmd, "r");
	while (f && k < 65536 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %lx %c", &a, &sz, &type) == 3 && sz &&
		    (type == 'T' || type == 't' || type == 'W')) {
			fn[k][0] = a;
			fn[k++][1] = sz;
		}
	if (f)
		pclose(f);
	for (i = 0; k && i < n; i++) {
		size_t j = rng() % k;

		out[i] = fn[j][0] + rng() % fn[j][1];
	}
	free(fn);
	return k ? n : 0;
}

static void compare_inline(const char *self, const char *module, const char *what, size_t n)
{
	char in[] = "/tmp/kperf-bench-inl-XXXXXX", cmd[3][4400];
	const char *names[3] = { "kperf-bpf", "addr2line -f -i -C", "llvm-symbolizer --inlining" };
	unsigned long *addrs = malloc(n * sizeof(*addrs));
	double wall[3], cpu[3], t0, warm;
	size_t i, frames = 0, inl = 0;
	int fd = mkstemp(in), t;
	FILE *f;

	if (fd < 0 || !addrs || !function_addrs(module, addrs, n, strstr(module, ".so"))) {
		printf("  %s: no addresses (nm failed)\n", module);
		free(addrs);
		return;
	}
	f = fdopen(fd, "w");
	for (i = 0; i < n; i++)
		fprintf(f, "%#lx\n", addrs[i]);
	fclose(f);
	snprintf(cmd[0], sizeof(cmd[0]), "'%s' --resolve '%s'", self, module);
	snprintf(cmd[1], sizeof(cmd[1]), "addr2line -f -i -C -e '%s'", module);
	snprintf(cmd[2], sizeof(cmd[2]), "llvm-symbolizer --inlining --obj='%s'", module);
	run_symbolizers(cmd, 3, in, SYM_ROUNDS, wall, cpu);
	/* warm, ours: the same addresses again in a process that resolved them once (the tools
	 * have no cache to be warm with: each run is a new process, the files in the page cache) */
	SymResolverDestroy();
	for (i = 0; i < n; i++) {
		const struct Stack *st = KperfMapCodeFrames(module, addrs[i], &inline_opts);

		for (; st; st = st->next, frames++)
			inl += st->next != NULL;
	}
	t0 = cpu_s();
	for (i = 0; i < n; i++)
		KperfMapCodeFrames(module, addrs[i], &inline_opts);
	warm = cpu_s() - t0;
	printf("  %s (%s): %zu addresses, %zu frames, %zu of them inlined calls\n", what, module, n,
	       frames, inl);
	printf("    %-28s %12s %12s %10s\n", "cold, a new process:", "wall (median)", "CPU (least)",
	       "addr/s");
	for (t = 0; t < 3; t++) {
		if (wall[t] < 0) {
			printf("    %-28s (not run)\n", names[t]);
			continue;
		}
		printf("    %-28s %10.1f ms %10.1f ms %10.0f\n", names[t], wall[t] * 1e3,
		       cpu[t] * 1e3, n / wall[t]);
	}
	printf("    warm, kperf-bpf in the process: %.2f ms, %.0f addr/s\n", warm * 1e3, n / warm);
	if (wall[0] > 0 && wall[1] > 0 && wall[2] > 0) {
		double bw = wall[1] < wall[2] ? wall[1] : wall[2];
		double bc = cpu[1] < cpu[2] ? cpu[1] : cpu[2];

		printf("    kperf-bpf cold vs the faster of the two: %.1fx in wall time, %.1fx in CPU "
		       "time (addr2line %.1fx/%.1fx, llvm-symbolizer %.1fx/%.1fx)\n",
		       bw / wall[0], bc / cpu[0], wall[1] / wall[0], cpu[1] / cpu[0],
		       wall[2] / wall[0], cpu[2] / cpu[0]);
	}
	unlink(in);
	free(addrs);
}

/* the cost of opening <module>'s DWARF (its debug file): inflating, indexing the units */
static double dwarf_open_ms(const char *module, bool zlib, double *wall_ms)
{
	struct sym_file_ref ref = { .path = module, .open_path = module };
	struct sym_file *f = NULL;
	double t0, w0, t;

	*wall_ms = -1;
	SymResolverDestroy();
	sym_dwarf_set_slow_inflate(zlib);
	sym_lock();
	if (sym_file_get(&ref, KP_SYM_DWARF, &f)) {
		sym_unlock();
		return -1;
	}
	t0 = cpu_s();
	w0 = now_s();
	t = sym_file_dwarf(f) ? -1 : (cpu_s() - t0) * 1e3;
	*wall_ms = (now_s() - w0) * 1e3;
	sym_unlock();
	sym_dwarf_set_slow_inflate(false);
	return t;
}

static void inline_section(const char *self, const char *build, const char *libc, size_t n)
{
	char wl[4200];
	double fast_w, slow_w, fast = dwarf_open_ms(libc, false, &fast_w),
			       slow = dwarf_open_ms(libc, true, &slow_w);

	printf("inline frames, against addr2line -f -i -C and llvm-symbolizer --inlining (each "
	       "cold = a new process):\n");
	compare_inline(self, libc, "libc with its debug file", n);
	snprintf(wl, sizeof(wl), "%s/workloads/inline_cxx", build);
	compare_inline(self, wl, "the -O2 C++ workload", n);
	printf("  fixed cost of libc's debug file (open the DWARF, index its units): %.1f ms CPU, "
	       "%.1f ms wall (libdeflate, .debug_info on a second thread); %.1f ms CPU "
	       "inflated with zlib as libdw does\n",
	       fast, fast_w, slow);
	SymResolverDestroy();
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	size_t sample = argc > 2 ? strtoul(argv[2], NULL, 0) : 20000;
	const char *build = getenv("KPERF_BUILD") ? getenv("KPERF_BUILD") : "build";
	struct range r[3]; /* kernel, libc, workload */
	unsigned long *addrs;
	char wl[4096], printed[4096];
	double t_cold, t_warm, t_dcold, t_dwarm;
	size_t i, unknown, nd, per[3] = { 0 };
	struct kp_sym_stats st;
	int in;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "--resolve"))
		return resolve_stdin(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "--inline")) {
		/* only the inline comparison (KPERF_SYM_BENCH_N addresses, default 2000) */
		const char *nv = getenv("KPERF_SYM_BENCH_N");

		inline_section(argv[0], build, "/lib/x86_64-linux-gnu/libc.so.6",
			       nv ? strtoul(nv, NULL, 0) : 2000);
		return 0;
	}
	if (n < 3 || sample < 2) {
		fprintf(stderr, "usage: sym_resolve [N >= 3] [SAMPLE >= 2]\n");
		return 2;
	}
	snprintf(wl, sizeof(wl), "%s/workloads/sym_hot", build);
	pid = start_workload(wl, &in, printed, sizeof(printed));
	if (pid <= 0) {
		fprintf(stderr, "sym_resolve: cannot start %s (make workloads)\n", wl);
		return 1;
	}
	if (kernel_text(&r[0]) || find_text(pid, "/libc.so", &r[1]) ||
	    find_text(pid, "sym_hot", &r[2]) || workload_text(r[2].path, printed, &r[2])) {
		fprintf(stderr, "sym_resolve: cannot find the kernel, libc or workload text "
				"(run as root: kallsyms addresses)\n");
		kill(pid, SIGKILL);
		return 1;
	}
	addrs = malloc(n * sizeof(*addrs));
	if (!addrs)
		return 1;
	for (i = 0; i < n; i++) {
		const struct range *g = &r[i % 3];

		addrs[i] = g->start + rng() % (g->end - g->start);
		per[i % 3]++;
	}
	nd = distinct(addrs, n);
	printf("sym_resolve: %zu addresses, %zu distinct: %zu kernel text (%lu KiB), %zu libc "
	       "text (%lu KiB), %zu workload .text (%lu bytes)\n",
	       n, nd, per[0], (r[0].end - r[0].start) >> 10, per[1], (r[1].end - r[1].start) >> 10,
	       per[2], r[2].end - r[2].start);

	SymResolverDestroy();
	t_cold = resolve_all(pid, addrs, n, false, &unknown);
	t_warm = resolve_all(pid, addrs, n, false, &unknown);
	kp_sym_get_stats(&st);
	SymResolverDestroy();
	t_dcold = resolve_all(pid, addrs, n, true, &unknown);
	t_dwarm = resolve_all(pid, addrs, n, true, &unknown);
	if (t_cold < 0 || t_warm < 0 || t_dcold < 0 || t_dwarm < 0)
		return 1;
	printf("  ELF        cold %10.0f addr/s   warm %10.0f addr/s   (warm/cold %.1fx)\n",
	       n / t_cold, n / t_warm, t_cold / t_warm);
	printf("  ELF+DWARF  cold %10.0f addr/s   warm %10.0f addr/s   (warm/cold %.1fx)\n",
	       n / t_dcold, n / t_dwarm, t_dcold / t_dwarm);
	printf("  %zu of %zu unknown (padding between functions); %u files parsed, "
	       "%llu symbols\n",
	       unknown, n, st.files_parsed, (unsigned long long)st.symbols);

	/* stacks: 100000 calls over 10000 distinct stacks of depth 8 */
	{
		enum { DEPTH = 8, DISTINCT = 10000, CALLS = 100000 };
		unsigned long *stacks = malloc(sizeof(unsigned long) * DEPTH * DISTINCT);
		double t0, t1, t2;
		int k, d;

		if (!stacks)
			return 1;
		for (k = 0; k < DISTINCT * DEPTH; k++)
			stacks[k] = addrs[rng() % n];
		SymResolverDestroy();
		SymResolverRecordModuleNoDwarf(pid);
		t0 = cpu_s();
		for (k = 0; k < DISTINCT; k++)
			if (!StackToHash(pid, stacks + k * DEPTH, DEPTH))
				return 1;
		t1 = cpu_s();
		for (k = 0; k < CALLS; k++) {
			d = (int)(rng() % DISTINCT);
			if (!StackToHash(pid, stacks + d * DEPTH, DEPTH))
				return 1;
		}
		t2 = cpu_s();
		printf("  StackToHash depth %d: first sight %9.0f stacks/s, seen before %9.0f "
		       "stacks/s\n",
		       DEPTH, DISTINCT / (t1 - t0), CALLS / (t2 - t1));
		free(stacks);
	}

	/* user addresses against addr2line / eu-addr2line: cold, with lines, per module */
	printf("user addresses vs addr2line (%zu per module, cold, names + lines; tool time "
	       "includes its start-up, as ours includes parsing):\n",
	       sample / 2);
	for (i = 1; i < 3; i++) {
		size_t m = sample / 2, k;
		unsigned long *ua = malloc(m * sizeof(*ua)), *fa = malloc(m * sizeof(*fa));
		struct Symbol **ours = malloc(m * sizeof(*ours));
		const char *tools[] = { "addr2line", "eu-addr2line" };
		double t0, ours_s;
		int t;

		if (!ua || !fa || !ours)
			return 1;
		for (k = 0; k < m; k++)
			ua[k] = r[i].start + rng() % (r[i].end - r[i].start);
		SymResolverDestroy();
		t0 = cpu_s();
		if (SymResolverRecordModule(pid))
			return 1;
		for (k = 0; k < m; k++) {
			ours[k] = SymResolverMapAddr(pid, ua[k]);
			if (!ours[k])
				return 1;
			fa[k] = ours[k]->codeMapAddr;
		}
		ours_s = cpu_s() - t0;
		printf("  %s (%zu distinct addresses)\n    kperf-bpf     %10.0f addr/s\n",
		       r[i].path, distinct(ua, m), m / ours_s);
		for (t = 0; t < 2; t++) {
			int name_ok = 0, line_ok = 0, line_total = 0;
			double tool_s;

			compare_tool(tools[t], r[i].path, fa, ours, m, ours_s, &name_ok, &line_ok,
				     &line_total, &tool_s);
			if (tool_s < 0) {
				printf("    %-13s (not run)\n", tools[t]);
				continue;
			}
			printf("    %-13s %10.0f addr/s   kperf-bpf/%s = %.1fx   names agree "
			       "%.1f%%, lines agree %.1f%% of %d\n",
			       tools[t], m / tool_s, tools[t], tool_s / ours_s,
			       100.0 * name_ok / (double)m,
			       line_total ? 100.0 * line_ok / line_total : 100.0, line_total);
		}
		free(ua);
		free(fa);
		free(ours);
	}
	SymResolverDestroy();
	close(in);
	waitpid(pid, NULL, 0);
	free(addrs);
	inline_section(argv[0], build, r[1].path, 2000);
	return 0;
}
