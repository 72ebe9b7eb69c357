/*
 * flame.c - flame graphs: stacks merged into a tree (root at the bottom, callees above, the
 * width of a frame its share of the total), written as one self-contained interactive SVG
 * file: a tooltip per frame with its value and percentage, click to zoom into a frame, Search
 * (or Ctrl-F) to highlight frames by regular expression with the share they match. The
 * frames are drawn by this file; the script only rescales them. Colours tell user frames
 * (warm), inlined user functions (aqua, as flamegraph.pl draws "_[i]"; "(inlined)" in their
 * tooltip), kernel frames (orange) and frames of time off the CPU (blues) apart.
 *
 * Every frame's <g> carries its value (data-v), the part of it spent off the CPU (data-b),
 * its offset from the left in the same unit (data-x) and its depth (data-d): the script
 * needs them to zoom, and they let a test check that the widths add up.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "export.h"
#include "flame_js.h"
#include "kperf/pcerrc.h"
#include "sym/sym.h"

#define WIDTH 1200.0
#define PAD 10.0 /* left and right */
#define FRAME_H 16
#define TOP 60 /* title, subtitle, controls */
#define BOTTOM 36 /* details line */
#define FONT 12
#define CHAR_W (FONT * 0.59)
#define MIN_W 0.1 /* narrower frames (and what is above them) are not drawn */

struct node {
	char *name;
	enum kp_frame_kind kind;
	uint32_t parent;
	uint32_t child, sibling; /* first child, next sibling (0: none; node 0 is the root) */
	uint64_t value, blocked;
};

struct kp_flame {
	struct node *n;
	size_t len, cap;
	uint32_t *slots; /* open addressing over (parent, kind, name): node index + 1 */
	size_t nslots;
	unsigned depth; /* of the deepest frame */
};

static uint64_t hash_of(uint32_t parent, enum kp_frame_kind kind, const char *name)
{
	uint64_t h = 1469598103934665603ULL ^ ((uint64_t)parent << 8 | (unsigned)kind);

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ULL;
	return h;
}

static uint32_t *slot_of(struct kp_flame *f, uint32_t parent, enum kp_frame_kind kind,
			 const char *name)
{
	size_t i = hash_of(parent, kind, name) & (f->nslots - 1);

	for (;; i = (i + 1) & (f->nslots - 1)) {
		struct node *x;

		if (!f->slots[i])
			return &f->slots[i];
		x = &f->n[f->slots[i] - 1];
		if (x->parent == parent && x->kind == kind && !strcmp(x->name, name))
			return &f->slots[i];
	}
}

static int rehash(struct kp_flame *f)
{
	size_t want = f->nslots ? f->nslots * 2 : 1024, i;

	free(f->slots);
	f->slots = calloc(want, sizeof(*f->slots));
	if (!f->slots)
		return -ENOMEM;
	f->nslots = want;
	for (i = 1; i < f->len; i++) /* node 0, the root, has no parent */
		*slot_of(f, f->n[i].parent, f->n[i].kind, f->n[i].name) = (uint32_t)i + 1;
	return 0;
}

struct kp_flame *kp_flame_new(void)
{
	struct kp_flame *f = calloc(1, sizeof(*f));

	if (!f || kp_grow((void **)&f->n, &f->cap, 1, sizeof(*f->n)))
		goto nomem;
	f->n[0] = (struct node){ .name = strdup("all"), .kind = KP_FRAME_ROOT };
	if (!f->n[0].name)
		goto nomem;
	f->len = 1;
	return f;
nomem:
	kp_flame_free(f);
	kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	return NULL;
}

void kp_flame_free(struct kp_flame *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->len; i++)
		free(f->n[i].name);
	free(f->n);
	free(f->slots);
	free(f);
}

/* the child <name> of <parent>, created when new; 0 when out of memory */
static uint32_t child(struct kp_flame *f, uint32_t parent, const struct kp_flame_frame *fr)
{
	uint32_t *slot;
	struct node *x;

	if ((f->len + 1) * 2 > f->nslots && rehash(f))
		return 0;
	slot = slot_of(f, parent, fr->kind, fr->name);
	if (*slot)
		return *slot - 1;
	if (f->len >= UINT32_MAX - 1 || kp_grow((void **)&f->n, &f->cap, f->len + 1, sizeof(*f->n)))
		return 0;
	x = &f->n[f->len];
	*x = (struct node){ .name = strdup(fr->name), .kind = fr->kind, .parent = parent };
	if (!x->name)
		return 0;
	/* children are kept sorted by name, so that the graph does not depend on the order
	 * the stacks came in */
	{
		uint32_t *link = &f->n[parent].child;

		while (*link && strcmp(f->n[*link].name, fr->name) < 0)
			link = &f->n[*link].sibling;
		x->sibling = *link;
		*link = (uint32_t)f->len;
	}
	*slot = (uint32_t)++f->len;
	return *slot - 1;
}

int kp_flame_add(struct kp_flame *f, const struct kp_flame_frame *frames, unsigned n,
		 uint64_t value, bool blocked)
{
	uint32_t at = 0;
	unsigned i;

	if (!value)
		return 0;
	f->n[0].value += value;
	f->n[0].blocked += blocked ? value : 0;
	for (i = 0; i < n; i++) {
		at = child(f, at, &frames[i]);
		if (!at)
			return kp_fail(COMMON_ERR_NOMEM, -ENOMEM,
				       "out of memory for the flame graph");
		f->n[at].value += value;
		f->n[at].blocked += blocked ? value : 0;
	}
	if (n > f->depth)
		f->depth = n;
	return 0;
}

uint64_t kp_flame_total(const struct kp_flame *f)
{
	return f->n[0].value;
}

/* ---- SVG ---- */

/* <s> as XML text: markup characters escaped, control characters and bytes that are not
 * UTF-8 replaced by '?', at most <max> characters (then ".."). */
static void put_text(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t chars = 0;

	while (*p) {
		unsigned len = *p < 0x80       ? 1 :
			       (*p >> 5) == 6  ? 2 :
			       (*p >> 4) == 14 ? 3 :
			       (*p >> 3) == 30 ? 4 :
						 0;
		unsigned i;

		if (chars == max) {
			fputs("..", out);
			return;
		}
		for (i = 1; i < len; i++)
			if ((p[i] & 0xc0) != 0x80)
				len = 0;
		if (!len || (len == 1 && *p < 0x20)) {
			fputc('?', out);
			p++;
		} else if (len > 1) {
			fwrite(p, 1, len, out);
			p += len;
		} else {
			switch (*p) {
			case '&':
				fputs("&amp;", out);
				break;
			case '<':
				fputs("&lt;", out);
				break;
			case '>':
				fputs("&gt;", out);
				break;
			case '"':
				fputs("&quot;", out);
				break;
			case '\'':
				fputs("&apos;", out);
				break;
			default:
				fputc(*p, out);
			}
			p++;
		}
		chars++;
	}
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* A colour of the frame's palette, varied by its name so that neighbours differ: user code
 * warm, kernel orange; a frame whose time is mostly off the cpu in blues (its kernel frames
 * paler), the "[off-cpu]" frame itself deep blue. */
static void colour(const struct node *x, char *buf, size_t size)
{
	uint64_t h = hash_of(0, 0, x->name);
	double a = (double)(h & 0xff) / 255, b = (double)((h >> 8) & 0xff) / 255,
	       c = (double)((h >> 16) & 0xff) / 255;
	bool off = x->kind != KP_FRAME_ROOT && x->blocked * 2 > x->value;
	double rgb[3];

	switch (x->kind) {
	case KP_FRAME_ROOT:
		rgb[0] = rgb[1] = rgb[2] = 190;
		break;
	case KP_FRAME_PROCESS:
		rgb[0] = rgb[1] = 200 + 30 * a;
		rgb[2] = off ? 230 : 120 + 40 * b;
		break;
	case KP_FRAME_KERNEL:
		if (off) {
			rgb[0] = 90 + 40 * a;
			rgb[1] = 180 + 40 * b;
			rgb[2] = 215 + 40 * c;
		} else {
			rgb[0] = 225 + 30 * a;
			rgb[1] = 130 + 50 * b;
			rgb[2] = 20 + 40 * c;
		}
		break;
	case KP_FRAME_INLINE:
		rgb[0] = 50 + 40 * a;
		rgb[1] = off ? 150 + 30 * b : 190 + 40 * b;
		rgb[2] = off ? 225 + 30 * c : 180 + 40 * c;
		break;
	case KP_FRAME_BLOCKED:
		rgb[0] = 40 + 30 * a;
		rgb[1] = 50 + 40 * b;
		rgb[2] = 170 + 40 * c;
		break;
	case KP_FRAME_USER:
	default:
		if (off) {
			rgb[0] = 80 + 50 * a;
			rgb[1] = 100 + 50 * b;
			rgb[2] = 215 + 40 * c;
		} else {
			rgb[0] = 205 + 50 * a;
			rgb[1] = 200 * b;
			rgb[2] = 55 * c;
		}
		break;
	}
	snprintf(buf, size, "rgb(%u,%u,%u)", (unsigned)rgb[0], (unsigned)rgb[1], (unsigned)rgb[2]);
}

static const char *kind_code(enum kp_frame_kind k)
{
	static const char *const codes[] = { "r", "p", "u", "k", "b", "i" };

	return (unsigned)k < KP_ARRAY_SIZE(codes) ? codes[k] : "u";
}

struct svg {
	FILE *out;
	const struct kp_flame *f;
	const struct kp_flame_meta *m;
	double scale; /* pixels per unit of value */
	unsigned height;
	uint64_t drawn;
};

static void put_value(FILE *out, const char *unit, uint64_t v)
{
	if (!strcmp(unit, "ns"))
		fprintf(out, "%.3f ms", (double)v / 1e6);
	else
		fprintf(out, "%" PRIu64 " %s", v, unit);
}

static void frame(struct svg *s, uint32_t i, unsigned depth, uint64_t x0)
{
	const struct node *x = &s->f->n[i];
	double w = (double)x->value * s->scale, left = PAD + (double)x0 * s->scale;
	double y = s->height - BOTTOM - (double)(depth + 1) * FRAME_H;
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
	uint64_t total = s->f->n[0].value;
	char fill[32];
	uint32_t c;

	if (w < MIN_W)
		return;
	s->drawn++;
	colour(x, fill, sizeof(fill));
	fprintf(s->out,
		"<g class=\"f\" data-v=\"%" PRIu64 "\" data-b=\"%" PRIu64 "\" data-x=\"%" PRIu64
		"\" data-d=\"%u\" data-k=\"%s\"><title>",
		x->value, x->blocked, x0, depth, kind_code(x->kind));
	put_text(s->out, x->name, SIZE_MAX);
	fputs(x->kind == KP_FRAME_INLINE ? " (inlined; " : " (", s->out);
	put_value(s->out, s->m->unit, x->value);
	fprintf(s->out, ", %.2f%%", total ? 100.0 * (double)x->value / (double)total : 0);
	if (x->blocked)
		fprintf(s->out, "; off-CPU %.1f%%", 100.0 * (double)x->blocked / (double)x->value);
	fprintf(s->out,
		")</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
		"rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
		left, y, w, FRAME_H - 1, fill, left + 3, y + FRAME_H - 4.5);
	if (fit >= 3)
		put_text(s->out, x->name, utf8_chars(x->name) > fit ? fit - 2 : SIZE_MAX);
	fputs("</text></g>\n", s->out);
	for (c = x->child; c; c = s->f->n[c].sibling) {
		frame(s, c, depth + 1, x0);
		x0 += s->f->n[c].value;
	}
}

int kp_flame_svg(FILE *out, const struct kp_flame *f, const struct kp_flame_meta *m)
{
	struct svg s = { .out = out, .f = f, .m = m };
	uint64_t total = f->n[0].value;

	s.height = TOP + BOTTOM + (f->depth + 1) * FRAME_H;
	s.scale = total ? (WIDTH - 2 * PAD) / (double)total : 0;
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%u\" viewBox=\"0 0 %.0f %u\" "
		"onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style type=\"text/css\">\n"
		"text { font-family: Verdana, sans-serif; font-size: %dpx; fill: #000; }\n"
		"#title { text-anchor: middle; font-size: 17px; }\n"
		"#subtitle { text-anchor: middle; fill: #555; }\n"
		"#search, #unzoom { cursor: pointer; fill: #1a4f8a; }\n"
		"#search:hover, #unzoom:hover { text-decoration: underline; }\n"
		".hide { display: none; }\n"
		"g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
		"g.f text { pointer-events: none; }\n"
		"g.parent { opacity: 0.5; }\n"
		"</style>\n<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n"
		"<text id=\"title\" x=\"%.0f\" y=\"24\">",
		WIDTH, s.height, WIDTH, s.height, FONT, kp_flame_js, WIDTH / 2);
	put_text(out, m->title ? m->title : "Flame Graph", SIZE_MAX);
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%.0f\" y=\"42\">", WIDTH / 2);
	put_text(out, m->subtitle ? m->subtitle : "", SIZE_MAX);
	fprintf(out,
		"</text>\n<text id=\"unzoom\" class=\"hide\" x=\"%.0f\" y=\"24\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%.0f\" y=\"24\">Search</text>\n"
		"<text id=\"details\" x=\"%.0f\" y=\"%u\"> </text>\n"
		"<text id=\"matched\" x=\"%.0f\" y=\"%u\"> </text>\n"
		"<g id=\"frames\" data-total=\"%" PRIu64 "\" data-unit=\"",
		PAD, WIDTH - 110, PAD, s.height - 14, WIDTH - 160, s.height - 14, total);
	put_text(out, m->unit, SIZE_MAX);
	fprintf(out, "\" data-width=\"%.0f\" data-pad=\"%.0f\">\n", WIDTH - 2 * PAD, PAD);
	if (total)
		frame(&s, 0, 0, 0);
	fputs("</g>\n</svg>\n", out);
	return ferror(out) ? -EIO : 0;
}

/* ---- profiles (PmuData) as flame graphs ---- */

#define KERNEL_MIN 0xffff800000000000UL
#define MAX_DEPTH 512

static const char *profile_title(const struct kp_profile_meta *m)
{
	if (m->title)
		return m->title;
	if (m->event && !strcmp(m->event, "off-cpu"))
		return "Off-CPU Time";
	if (m->event && !strcmp(m->event, "wall"))
		return "Wall-Clock Time (on and off the CPU)";
	return "CPU Flame Graph";
}

static enum kp_frame_kind frame_kind(const struct Symbol *s)
{
	if (s->addr >= KERNEL_MIN)
		return KP_FRAME_KERNEL;
	return kp_sym_is_inline(s) ? KP_FRAME_INLINE : KP_FRAME_USER;
}

int kp_export_svg(FILE *f, const struct PmuData *d, int n, const struct kp_profile_meta *m)
{
	struct kp_flame_frame *frames = calloc(MAX_DEPTH + 2, sizeof(*frames));
	char(*labels)[256] = calloc(MAX_DEPTH, sizeof(*labels)), subtitle[256];
	struct kp_flame_meta fm = { .title = profile_title(m) };
	struct kp_flame *g = kp_flame_new();
	int i, err = 0;

	if (!frames || !labels || !g) {
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory for the flame graph");
		goto out;
	}
	for (i = 0; i < n && !err; i++) {
		const struct Stack *st, *chain[MAX_DEPTH];
		bool blocked = d[i].evt && !strcmp(d[i].evt, KP_BLOCKED_EVT);
		unsigned depth = 0, k = 0, j;

		for (st = d[i].stack; st && depth < MAX_DEPTH; st = st->next)
			if (st->symbol)
				chain[depth++] = st;
		frames[k++] =
			(struct kp_flame_frame){ d[i].comm && *d[i].comm ? d[i].comm : "[unknown]",
						 KP_FRAME_PROCESS };
		for (j = depth; j-- > 0;) {
			const struct Symbol *s = chain[j]->symbol;

			kp_frame_label(s, labels[j], sizeof(labels[j]));
			frames[k++] = (struct kp_flame_frame){ labels[j], frame_kind(s) };
		}
		if (blocked && m->mark_blocked)
			frames[k++] = (struct kp_flame_frame){ "[off-cpu]", KP_FRAME_BLOCKED };
		err = kp_flame_add(g, frames, k, kp_profile_value(&d[i], m->weight), blocked);
	}
	if (err)
		goto out;
	if (m->weight == KP_WEIGHT_TIME)
		snprintf(subtitle, sizeof(subtitle), "%s: %.3f ms in %.2f s",
			 m->event ? m->event : "", (double)kp_flame_total(g) / 1e6, m->duration_s);
	else
		snprintf(subtitle, sizeof(subtitle), "%s: %" PRIu64 " samples in %.2f s",
			 m->event ? m->event : "", kp_flame_total(g), m->duration_s);
	fm.subtitle = subtitle;
	fm.unit = m->weight == KP_WEIGHT_TIME ? "ns" : "samples";
	err = kp_flame_svg(f, g, &fm);
out:
	kp_flame_free(g);
	free(frames);
	free(labels);
	return err;
}
