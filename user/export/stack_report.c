/*
 * stack_report.c - syscalls by stack (kperf-bpf trace --stack): the stack of a per-call
 * record, the summary by stack as a table section, JSON, CSV rows, folded lines and a flame
 * graph of latency by stack. The folded and SVG outputs are the profile exporters' (profile.c,
 * flame.c) fed with one record per stack: its user frames under a frame named after the
 * syscall (a kernel frame), weighted by the total latency in ns.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "export.h"

#define KERNEL_MIN 0xffff800000000000ULL
#define MAX_FRAMES 128

static bool user_frame(const struct Stack *s)
{
	return s->symbol && s->symbol->addr < KERNEL_MIN;
}

static void put_json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path ? path : "";
}

/* "name  file:line" or "name  (module)" */
static void frame_line(FILE *f, const char *indent, const struct Symbol *s)
{
	char label[256];

	kp_frame_label(s, label, sizeof(label));
	if (s->fileName && *s->fileName && s->lineNum)
		fprintf(f, "%s%s  %s:%u\n", indent, label, base_name(s->fileName), s->lineNum);
	else
		fprintf(f, "%s%s  (%s)\n", indent, label, base_name(s->module));
}

static void json_frames(FILE *f, const struct Stack *st)
{
	bool first = true;

	fputc('[', f);
	for (; st; st = st->next) {
		const struct Symbol *s = st->symbol;

		if (!s)
			continue;
		fprintf(f, "%s{\"addr\":%lu,\"symbol\":", first ? "" : ",", s->addr);
		put_json_str(f, s->symbolName);
		fputs(",\"module\":", f);
		put_json_str(f, s->module);
		fputs(",\"file\":", f);
		put_json_str(f, s->fileName);
		fprintf(f, ",\"line\":%u,\"kernel\":%s}", s->lineNum,
			s->addr >= KERNEL_MIN ? "true" : "false");
		first = false;
	}
	fputc(']', f);
}

/* the user frames, root first, separated by ';' (a CSV cell, quoted) */
static void csv_folded(FILE *f, const struct Stack *st)
{
	const struct Stack *chain[MAX_FRAMES];
	unsigned n = 0, i;
	char label[256], *p;

	for (; st && n < MAX_FRAMES; st = st->next)
		if (user_frame(st))
			chain[n++] = st;
	fputc('"', f);
	for (i = n; i-- > 0;) {
		kp_frame_label(chain[i]->symbol, label, sizeof(label));
		for (p = label; *p; p++)
			if (*p == ';' || *p == '"')
				*p = '_';
		fprintf(f, "%s%s", i + 1 == n ? "" : ";", label);
	}
	fputc('"', f);
}

void kp_report_event_stack(FILE *f, enum kp_format fmt, const struct Stack *s)
{
	switch (fmt) {
	case KP_FORMAT_TABLE:
		for (; s; s = s->next)
			if (user_frame(s))
				frame_line(f, "        ", s->symbol);
		break;
	case KP_FORMAT_JSON:
		fputs(",\"stack\":", f);
		json_frames(f, s);
		break;
	case KP_FORMAT_CSV:
		fputc(',', f);
		csv_folded(f, s);
		break;
	}
}

/* the stack rows of process row <r>; pid 0 rows are overflow rows in both, not the same */
static bool same_row(const struct PmuTraceSummary *r, const struct KperfTraceStackSummary *s)
{
	return r->pid && r->pid == s->pid && r->nr == s->nr;
}

static void stack_head(FILE *f, int rank, const struct KperfTraceStackSummary *r)
{
	fprintf(f,
		"  #%d  %" PRIu64 " calls  total %.3f ms  avg %.3f us  max %.3f us"
		"  errors %" PRIu64 "\n",
		rank, r->calls, (double)r->totalNs / 1e6,
		r->calls ? (double)r->totalNs / (double)r->calls / 1e3 : 0.0,
		(double)r->maxNs / 1e3, r->errors);
}

static void table(FILE *f, const struct PmuTraceSummary *s, int n,
		  const struct KperfTraceStackSummary *ss, int nss, int top)
{
	int i, j, shown, stacks;

	fprintf(f,
		"\nStacks by total latency (at most %d per process and syscall; user frames, "
		"leaf first):\n",
		top);
	for (i = 0; i < n; i++) {
		stacks = 0;
		for (j = 0; j < nss; j++)
			stacks += same_row(&s[i], &ss[j]);
		if (!stacks)
			continue;
		fprintf(f, "\n%s (%d) %s: %" PRIu64 " calls in %d stack%s\n", s[i].comm,
			(int)s[i].pid, s[i].funcs, s[i].calls, stacks, stacks == 1 ? "" : "s");
		/* ss is sorted by total time: the first ones of this row are its top */
		for (j = 0, shown = 0; j < nss && shown < top; j++) {
			const struct KperfTraceStackSummary *r = &ss[j];
			const struct Stack *st;
			bool any = false;

			if (!same_row(&s[i], r))
				continue;
			stack_head(f, ++shown, r);
			for (st = r->stack; st; st = st->next) {
				if (user_frame(st)) {
					frame_line(f, "      ", st->symbol);
					any = true;
				}
			}
			if (!any)
				fputs(r->stack ? "      [no user frames]\n" :
						 "      [stack not kept]\n",
				      f);
		}
	}
	/* the calls the summary by stack had no row for, by syscall (pid 0) */
	for (j = 0; j < nss; j++) {
		const struct KperfTraceStackSummary *r = &ss[j];

		if (r->pid)
			continue;
		fprintf(f, "\n%s (0) %s: %" PRIu64 " calls without their process and stack\n",
			r->comm, r->funcs, r->calls);
		stack_head(f, 1, r);
		fprintf(f, "      %s\n",
			r->stack && r->stack->symbol ? r->stack->symbol->symbolName : "");
	}
}

void kp_report_syscall_stacks(FILE *f, enum kp_format fmt, const struct PmuTraceSummary *s, int n,
			      const struct KperfTraceStackSummary *ss, int nss, int top)
{
	int i;

	switch (fmt) {
	case KP_FORMAT_TABLE:
		table(f, s, n, ss, nss, top);
		break;
	case KP_FORMAT_JSON:
		fputs(",\"stacks\":[", f);
		for (i = 0; i < nss; i++) {
			const struct KperfTraceStackSummary *r = &ss[i];

			fprintf(f, "%s{\"pid\":%d,\"comm\":", i ? "," : "", (int)r->pid);
			put_json_str(f, r->comm);
			fputs(",\"syscall\":", f);
			put_json_str(f, r->funcs);
			fprintf(f,
				",\"nr\":%d,\"calls\":%" PRIu64 ",\"errors\":%" PRIu64
				",\"total_ns\":%" PRIu64 ",\"min_ns\":%" PRIu64
				",\"max_ns\":%" PRIu64 ",\"frames\":",
				r->nr, r->calls, r->errors, r->totalNs, r->minNs, r->maxNs);
			json_frames(f, r->stack);
			fputc('}', f);
		}
		fputc(']', f);
		break;
	case KP_FORMAT_CSV:
		for (i = 0; i < nss; i++) {
			const struct KperfTraceStackSummary *r = &ss[i];

			fprintf(f, "stack,%d,,\"", (int)r->pid);
			for (const char *p = r->comm; *p; p++)
				fputs(*p == '"' ? "\"\"" : (char[]){ *p, 0 }, f);
			fprintf(f,
				"\",,%s,%d,,,,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 ",%" PRIu64 ",,,,",
				r->funcs, r->nr, r->calls, r->errors, r->totalNs, r->minNs,
				r->maxNs, r->calls ? r->totalNs / r->calls : 0);
			fputc(',', f);
			csv_folded(f, r->stack);
			fputc('\n', f);
		}
		break;
	}
}

/* one PmuData per stack: the syscall as the leaf (a kernel frame), then the user frames */
struct as_profile {
	struct PmuData *d;
	struct Stack *nodes;
	struct Symbol *calls; /* the syscall frames */
};

static int to_profile(const struct KperfTraceStackSummary *ss, int nss, struct as_profile *p)
{
	size_t nodes = 0;
	int i;

	for (i = 0; i < nss; i++) {
		const struct Stack *st;

		nodes++;
		for (st = ss[i].stack; st; st = st->next)
			nodes += user_frame(st);
	}
	p->d = calloc((size_t)nss + 1, sizeof(*p->d));
	p->nodes = calloc(nodes + 1, sizeof(*p->nodes));
	p->calls = calloc((size_t)nss + 1, sizeof(*p->calls));
	if (!p->d || !p->nodes || !p->calls)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory for the flame graph");
	nodes = 0;
	for (i = 0; i < nss; i++) {
		struct Stack *prev = &p->nodes[nodes++];
		const struct Stack *st;

		p->calls[i] = (struct Symbol){ .addr = KERNEL_MIN,
					       .symbolName = (char *)ss[i].funcs,
					       .module = (char *)"[kernel.kallsyms]" };
		prev->symbol = &p->calls[i];
		p->d[i] = (struct PmuData){ .stack = prev,
					    .evt = "syscall latency",
					    .comm = ss[i].comm,
					    .pid = ss[i].pid,
					    .tid = ss[i].pid,
					    .cpu = -1,
					    .period = ss[i].totalNs,
					    .count = ss[i].calls };
		for (st = ss[i].stack; st; st = st->next) {
			struct Stack *node;

			if (!user_frame(st))
				continue;
			node = &p->nodes[nodes++];
			node->symbol = st->symbol;
			node->prev = prev;
			prev->next = node;
			prev = node;
		}
	}
	return 0;
}

static void profile_free(struct as_profile *p)
{
	free(p->d);
	free(p->nodes);
	free(p->calls);
}

int kp_report_stacks_folded(FILE *f, const struct KperfTraceStackSummary *ss, int nss)
{
	struct kp_profile_meta m = { .event = "syscall latency", .weight = KP_WEIGHT_TIME };
	struct as_profile p = { 0 };
	int err = to_profile(ss, nss, &p);

	if (!err)
		kp_export_folded_by(f, p.d, nss, &m);
	profile_free(&p);
	return err;
}

int kp_report_stacks_svg(FILE *f, const struct KperfTraceStackSummary *ss, int nss,
			 double duration_s)
{
	struct kp_profile_meta m = { .event = "syscall latency",
				     .weight = KP_WEIGHT_TIME,
				     .duration_s = duration_s,
				     .title = "Syscall latency by stack" };
	struct as_profile p = { 0 };
	int err = to_profile(ss, nss, &p);

	if (!err)
		err = kp_export_svg(f, p.d, nss, &m);
	profile_free(&p);
	return err;
}
