/*
 * test_flame.c - the flame graph SVG from hand-made stacks: each frame's width is its value
 * at the graph's scale and its children's add up to at most its own, siblings come in name
 * order whatever the order of the stacks, names are escaped for XML (markup, control bytes,
 * broken UTF-8), blocked time is marked and coloured, and times are shown in ms.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"

#define F(n, k) ((struct kp_flame_frame){ (n), (k) })

/* the SVG of <g> in a malloc'd string */
static char *svg_of(struct kp_flame *g, const char *unit)
{
	struct kp_flame_meta m = { .title = "t <1>", .subtitle = "s", .unit = unit };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	cr_assert_eq(kp_flame_svg(f, g, &m), 0);
	fclose(f);
	return buf;
}

/* the attributes of the frame whose title starts with "<name> (" */
struct fr {
	unsigned long long v, b, x;
	unsigned d;
	double left, width;
	char kind;
};

static bool find(const char *svg, const char *name, struct fr *out)
{
	char want[256];
	const char *t, *g;

	snprintf(want, sizeof(want), "<title>%s (", name);
	t = strstr(svg, want);
	if (!t)
		return false;
	for (g = t; g > svg && strncmp(g, "<g class=\"f\"", 12); g--)
		;
	cr_assert_eq(sscanf(g,
			    "<g class=\"f\" data-v=\"%llu\" data-b=\"%llu\" data-x=\"%llu\" "
			    "data-d=\"%u\" data-k=\"%c\"",
			    &out->v, &out->b, &out->x, &out->d, &out->kind),
		     5, "%.120s", g);
	cr_assert_eq(sscanf(strstr(t, "<rect"), "<rect x=\"%lf\" y=\"%*f\" width=\"%lf\"",
			    &out->left, &out->width),
		     2);
	return true;
}

Test(flame, widths_are_values_and_add_up)
{
	struct kp_flame *g = kp_flame_new();
	struct kp_flame_frame a[] = { F("wl", KP_FRAME_PROCESS), F("main", KP_FRAME_USER),
				      F("work", KP_FRAME_USER), F("hot", KP_FRAME_USER) };
	struct kp_flame_frame b[] = { F("wl", KP_FRAME_PROCESS), F("main", KP_FRAME_USER),
				      F("idle", KP_FRAME_USER), F("schedule", KP_FRAME_KERNEL) };
	struct fr all, wl, main_, work, hot, idle, sched;
	double scale;
	char *svg;

	cr_assert_not_null(g);
	cr_assert_eq(kp_flame_add(g, a, 4, 600, false), 0);
	cr_assert_eq(kp_flame_add(g, b, 4, 300, true), 0);
	cr_assert_eq(kp_flame_add(g, a, 2, 100, false), 0); /* self time in main */
	cr_assert_eq(kp_flame_add(g, a, 4, 0, false), 0); /* nothing */
	cr_assert_eq(kp_flame_total(g), 1000);
	svg = svg_of(g, "samples");
	cr_assert(find(svg, "all", &all) && find(svg, "wl", &wl) && find(svg, "main", &main_) &&
		  find(svg, "work", &work) && find(svg, "hot", &hot) && find(svg, "idle", &idle) &&
		  find(svg, "schedule", &sched));
	scale = all.width / 1000.0;
	cr_assert_float_eq(all.width, 1180.0, 0.01);
	cr_assert_eq(all.v, 1000);
	cr_assert_eq(wl.v, 1000);
	cr_assert_eq(main_.v, 1000);
	cr_assert_eq(work.v + idle.v, 900, "main's children: all but its self time");
	cr_assert_eq(hot.v, 600);
	cr_assert_eq(sched.v, 300);
	cr_assert_float_eq(work.width, 600 * scale, 0.01);
	cr_assert_float_eq(idle.width, 300 * scale, 0.01);
	/* siblings in name order: idle before work */
	cr_assert_eq(idle.x, 0);
	cr_assert_eq(work.x, 300);
	cr_assert_float_eq(work.left, 10 + 300 * scale, 0.01);
	cr_assert_eq(hot.d, 4);
	cr_assert_eq(all.d, 0);
	/* blocked time, its kind and its share in the tooltip */
	cr_assert_eq(idle.b, 300);
	cr_assert_eq(sched.kind, 'k');
	cr_assert_eq(hot.kind, 'u');
	cr_assert_eq(wl.kind, 'p');
	cr_assert(strstr(svg, "<title>idle (300 samples, 30.00%; off-CPU 100.0%)</title>"));
	cr_assert(strstr(svg, "<title>hot (600 samples, 60.00%)</title>"));
	cr_assert(strstr(svg, "<text id=\"title\" x=\"600\" y=\"24\">t &lt;1&gt;</text>"));
	cr_assert(strstr(svg, "data-total=\"1000\" data-unit=\"samples\""));
	free(svg);
	kp_flame_free(g);
}

Test(flame, order_of_the_stacks_does_not_matter)
{
	struct kp_flame_frame x[] = { F("p", KP_FRAME_PROCESS), F("b", KP_FRAME_USER) };
	struct kp_flame_frame y[] = { F("p", KP_FRAME_PROCESS), F("a", KP_FRAME_USER) };
	struct kp_flame *g1 = kp_flame_new(), *g2 = kp_flame_new();
	char *s1, *s2;

	kp_flame_add(g1, x, 2, 5, false);
	kp_flame_add(g1, y, 2, 7, false);
	kp_flame_add(g2, y, 2, 7, false);
	kp_flame_add(g2, x, 2, 5, false);
	s1 = svg_of(g1, "samples");
	s2 = svg_of(g2, "samples");
	cr_assert_str_eq(s1, s2);
	free(s1);
	free(s2);
	kp_flame_free(g1);
	kp_flame_free(g2);
}

Test(flame, names_are_escaped_and_times_in_ms)
{
	struct kp_flame *g = kp_flame_new();
	struct kp_flame_frame a[] = { F("p&q", KP_FRAME_PROCESS),
				      F("operator<<(\"x\", 'y')", KP_FRAME_USER),
				      F("bad\x01\xff\xc3z", KP_FRAME_USER),
				      F("caf\xc3\xa9", KP_FRAME_USER),
				      F("[off-cpu]", KP_FRAME_BLOCKED) };
	char *svg;

	kp_flame_add(g, a, 5, 2500000, true);
	svg = svg_of(g, "ns");
	cr_assert(strstr(svg, "<title>p&amp;q (2.500 ms, 100.00%; off-CPU 100.0%)</title>"), "%s",
		  svg);
	cr_assert(strstr(svg, "operator&lt;&lt;(&quot;x&quot;, &apos;y&apos;) (2.500 ms"));
	cr_assert(strstr(svg, "<title>bad???z (2.500 ms"), "control and broken bytes");
	cr_assert(strstr(svg, "<title>caf\xc3\xa9 (2.500 ms"), "UTF-8 kept");
	cr_assert(strstr(svg, "data-k=\"b\"><title>[off-cpu] ("));
	cr_assert_null(strstr(svg, "\x01"));
	free(svg);
	kp_flame_free(g);
}

Test(flame, an_empty_graph_is_still_a_document)
{
	struct kp_flame *g = kp_flame_new();
	char *svg = svg_of(g, "samples");

	cr_assert(strstr(svg, "<g id=\"frames\" data-total=\"0\""));
	cr_assert_null(strstr(svg, "<g class=\"f\""));
	cr_assert(strstr(svg, "</svg>\n"));
	free(svg);
	kp_flame_free(g);
}

/* a profile of PmuData: comm at the bottom, kernel frames marked, [off-cpu] on blocked ones */
Test(flame, profiles_by_samples_and_by_time)
{
	struct Symbol u = { .addr = 0x401000, .symbolName = "wait_on_pipe", .module = "/x" };
	struct Symbol k = { .addr = 0xffffffff81000000UL, .symbolName = "schedule" };
	struct Stack s2 = { .symbol = &u }, s1 = { .symbol = &k, .next = &s2 };
	struct PmuData d[] = {
		{ .evt = "cpu-clock", .comm = "wl", .stack = &s2, .count = 3, .period = 3000000 },
		{ .evt = "context-switches",
		  .comm = "wl",
		  .stack = &s1,
		  .count = 2,
		  .period = 7000000 },
	};
	struct kp_profile_meta m = { .event = "wall",
				     .weight = KP_WEIGHT_TIME,
				     .mark_blocked = true };
	struct fr all, off, w;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_eq(kp_export_svg(f, d, 2, &m), 0);
	fclose(f);
	cr_assert(find(buf, "all", &all) && find(buf, "[off-cpu]", &off) &&
		  find(buf, "wait_on_pipe", &w));
	cr_assert_eq(all.v, 10000000);
	cr_assert_eq(off.v, 7000000);
	cr_assert_eq(off.kind, 'b');
	cr_assert_eq(w.b, 7000000);
	cr_assert(strstr(buf, "Wall-Clock Time"));
	cr_assert(strstr(buf, "wall: 10.000 ms in 0.00 s"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	m = (struct kp_profile_meta){ .event = "cpu-clock" };
	cr_assert_eq(kp_export_svg(f, d, 2, &m), 0);
	fclose(f);
	cr_assert(find(buf, "all", &all));
	cr_assert_eq(all.v, 5, "by samples: 3 + 2");
	cr_assert_null(strstr(buf, "[off-cpu]"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	m = (struct kp_profile_meta){ .weight = KP_WEIGHT_TIME, .mark_blocked = true };
	cr_assert_eq(kp_export_folded_by(f, d, 2, &m), 2);
	fclose(f);
	cr_assert_str_eq(buf, "wl;wait_on_pipe 3000000\n"
			      "wl;wait_on_pipe;schedule_[k];[off-cpu] 7000000\n");
	free(buf);
}
