/*
 * profile.c - sampled profiles (PmuData records with stacks, leaf first) as folded stacks,
 * pprof, JSON, and the "hottest functions" summary.
 *
 * pprof: sample types are [samples/count, <event>/<unit>] where the second value sums the
 * sample periods (nanoseconds for cpu-clock and task-clock, event counts otherwise).
 * Locations are de-duplicated by (address, functions, lines), functions by (name, file),
 * mappings by module; each sample carries pid, tid and comm labels, so `-tagfocus` works.
 *
 * Inline frames (stacks resolved with inlineFrames): in folded stacks a frame of its own
 * marked "_[i]" (as flamegraph.pl colours them), in pprof one more Line of the Location of
 * the address (the innermost first, as profile.proto orders them: `go tool pprof -lines`
 * shows each), in JSON "inlined": true, in the summary "name (inlined)". Compiler clones
 * (foo.isra.0, foo.cold) are reported under their base name, as perf groups them; JSON keeps
 * the raw name.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <cjson/cJSON.h>

#include "core/core.h"
#include "export.h"
#include "kperf/pcerrc.h"
#include "gen/profile.pb-c.h"
#include "sym/sym.h"

#define KERNEL_MIN 0xffff800000000000UL

static bool is_kernel(const struct Symbol *s)
{
	return s->addr >= KERNEL_MIN;
}

static bool known(const char *name)
{
	return name && *name && strcmp(name, "[unknown]");
}

void kp_frame_label(const struct Symbol *s, char *buf, size_t size)
{
	const char *mod, *base;

	if (known(s->symbolName)) {
		size_t len = kp_sym_base_len(s->symbolName);

		snprintf(buf, size, "%.*s", len > INT_MAX ? INT_MAX : (int)len, s->symbolName);
		return;
	}
	mod = s->module && *s->module ? s->module : NULL;
	if (!mod) {
		snprintf(buf, size, "0x%lx", s->addr);
		return;
	}
	base = strrchr(mod, '/');
	snprintf(buf, size, "%s+0x%lx", base ? base + 1 : mod, s->codeMapAddr);
}

/* ---- folded ---- */

int kp_export_folded(FILE *f, const struct PmuData *d, int n)
{
	return kp_export_folded_by(f, d, n, NULL);
}

/* <label> as one frame of a folded line: ';' separates frames and the last blank the count
 * (flamegraph.pl, speedscope), a line break ends the stack: each is '_' */
static void fold_label(char *label)
{
	char *p;

	for (p = label; *p; p++)
		if (*p == ';' || *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			*p = '_';
}

/* one folded line of <d> (without its value) into a malloc'd string */
static char *folded_line(const struct PmuData *d, const struct kp_profile_meta *m)
{
	const struct Stack *frames[512], *st;
	char label[512], *buf = NULL;
	size_t len = 0;
	int depth = 0, j;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (st = d->stack; st && depth < 512; st = st->next)
		if (st->symbol)
			frames[depth++] = st;
	/* the comm is the root frame: folded like the others (perf's stackcollapse turns its
	 * spaces into '_' too), so "[map full]" or a thread named "a;b c" stays one frame */
	snprintf(label, sizeof(label), "%s", d->comm && *d->comm ? d->comm : "[unknown]");
	fold_label(label);
	fputs(label, f);
	for (j = depth - 1; j >= 0; j--) {
		const struct Symbol *s = frames[j]->symbol;

		kp_frame_label(s, label, sizeof(label));
		fold_label(label);
		fprintf(f, ";%s%s", label,
			is_kernel(s)	    ? "_[k]" :
			kp_sym_is_inline(s) ? "_[i]" :
					      "");
	}
	if (m && m->mark_blocked && d->evt && !strcmp(d->evt, KP_BLOCKED_EVT))
		fputs(";[off-cpu]", f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* One line per distinct symbolized stack, in the order first seen: records of different
 * threads, cpus or raw addresses that read the same are one line with their values added. */
int kp_export_folded_by(FILE *f, const struct PmuData *d, int n, const struct kp_profile_meta *m)
{
	enum kp_weight w = m ? m->weight : KP_WEIGHT_SAMPLES;
	struct kp_map seen;
	char **lines = NULL;
	uint64_t *vals = NULL;
	size_t nlines = 0, cap = 0, capv = 0, k;
	int i, err = 0;

	kp_map_init(&seen, true);
	for (i = 0; i < n && !err; i++) {
		uint64_t v = kp_profile_value(&d[i], w);
		struct kp_map_slot *slot;
		bool created;
		char *line;

		if (!v)
			continue;
		line = folded_line(&d[i], m);
		slot = line ? kp_map_slot(&seen, line, &created) : NULL;
		if (!slot) {
			free(line);
			err = -ENOMEM;
			break;
		}
		if (!created) {
			vals[(size_t)slot->val - 1] += v;
			free(line);
			continue;
		}
		if (kp_grow((void **)&lines, &cap, nlines + 1, sizeof(*lines)) ||
		    kp_grow((void **)&vals, &capv, nlines + 1, sizeof(*vals))) {
			slot->key = NULL;
			free(line);
			err = -ENOMEM;
			break;
		}
		lines[nlines] = line;
		vals[nlines] = v;
		slot->val = (void *)(nlines + 1);
		nlines++;
	}
	for (k = 0; k < nlines; k++) {
		if (!err)
			fprintf(f, "%s %" PRIu64 "\n", lines[k], vals[k]);
		free(lines[k]);
	}
	kp_map_free(&seen);
	free(lines);
	free(vals);
	return err ? kp_fail(COMMON_ERR_NOMEM, err, "out of memory") : (int)nlines;
}

/* ---- pprof ---- */

struct pprof {
	Perftools__Profiles__Profile prof;
	struct kp_map strings; /* string -> index + 1 */
	struct kp_map funcs; /* "name\1file" -> id */
	struct kp_map maps; /* module -> id */
	struct kp_map locs; /* "addr\1func\1line" -> id */
	size_t cap_str, cap_fn, cap_map, cap_loc, cap_sample;
	char **owned; /* keys we allocated */
	size_t nowned, cap_owned;
	bool oom;
};

static char *own(struct pprof *p, const char *s)
{
	char *c = strdup(s);

	if (!c || kp_grow((void **)&p->owned, &p->cap_owned, p->nowned + 1, sizeof(char *))) {
		free(c);
		p->oom = true;
		return NULL;
	}
	p->owned[p->nowned++] = c;
	return c;
}

static int64_t str_index(struct pprof *p, const char *s)
{
	struct kp_map_slot *slot;
	bool created;
	char *copy;

	if (!s)
		s = "";
	slot = kp_map_slot(&p->strings, s, &created);
	if (!slot) {
		p->oom = true;
		return 0;
	}
	if (!created)
		return (int64_t)(uintptr_t)slot->val - 1;
	copy = own(p, s);
	if (!copy || kp_grow((void **)&p->prof.string_table, &p->cap_str,
			     p->prof.n_string_table + 1, sizeof(char *))) {
		p->oom = true;
		slot->key = ""; /* keep the map consistent; the export fails anyway */
		return 0;
	}
	slot->key = copy;
	p->prof.string_table[p->prof.n_string_table] = copy;
	slot->val = (void *)(uintptr_t)(p->prof.n_string_table + 1);
	return (int64_t)p->prof.n_string_table++;
}

/* id of the object keyed <key> in <m>; *created tells when the caller must build it */
static uint64_t lookup_id(struct pprof *p, struct kp_map *m, const char *key, size_t next_id,
			  bool *created)
{
	struct kp_map_slot *slot = kp_map_slot(m, key, created);
	char *copy;

	if (!slot) {
		p->oom = true;
		*created = false;
		return 0;
	}
	if (!*created)
		return (uint64_t)(uintptr_t)slot->val;
	copy = own(p, key);
	slot->key = copy ? copy : "";
	slot->val = (void *)(uintptr_t)next_id;
	return next_id;
}

static uint64_t mapping_id(struct pprof *p, const char *module)
{
	Perftools__Profiles__Mapping *m;
	bool created;
	uint64_t id;

	if (!module || !*module)
		module = "[unknown]";
	id = lookup_id(p, &p->maps, module, p->prof.n_mapping + 1, &created);
	if (!created)
		return id;
	m = calloc(1, sizeof(*m));
	if (!m || kp_grow((void **)&p->prof.mapping, &p->cap_map, p->prof.n_mapping + 1,
			  sizeof(*p->prof.mapping))) {
		free(m);
		p->oom = true;
		return 0;
	}
	perftools__profiles__mapping__init(m);
	m->id = id;
	m->filename = str_index(p, module);
	m->has_functions = true;
	p->prof.mapping[p->prof.n_mapping++] = m;
	return id;
}

static uint64_t function_id(struct pprof *p, const struct Symbol *s, const char *label)
{
	Perftools__Profiles__Function *fn;
	char key[1024];
	bool created;
	uint64_t id;

	snprintf(key, sizeof(key), "%s\1%s", label, s->fileName ? s->fileName : "");
	id = lookup_id(p, &p->funcs, key, p->prof.n_function + 1, &created);
	if (!created)
		return id;
	fn = calloc(1, sizeof(*fn));
	if (!fn || kp_grow((void **)&p->prof.function, &p->cap_fn, p->prof.n_function + 1,
			   sizeof(*p->prof.function))) {
		free(fn);
		p->oom = true;
		return 0;
	}
	perftools__profiles__function__init(fn);
	fn->id = id;
	fn->name = str_index(p, label);
	fn->system_name = str_index(p, known(s->mangleName) ? s->mangleName : label);
	fn->filename = str_index(p, s->fileName);
	p->prof.function[p->prof.n_function++] = fn;
	return id;
}

/* The Location of an address: <n> frames, inlined calls first (innermost), the function
 * last, each one Line. */
static uint64_t location_id(struct pprof *p, const struct Symbol *const *fr, size_t n)
{
	Perftools__Profiles__Location *loc;
	char label[512], key[4096];
	size_t i, klen;
	bool created;
	uint64_t id;

	klen = (size_t)snprintf(key, sizeof(key), "%lx", fr[n - 1]->addr);
	for (i = 0; i < n && klen < sizeof(key); i++) {
		kp_frame_label(fr[i], label, sizeof(label));
		klen += (size_t)snprintf(key + klen, sizeof(key) - klen, "\1%s\1%u", label,
					 fr[i]->lineNum);
	}
	id = lookup_id(p, &p->locs, key, p->prof.n_location + 1, &created);
	if (!created)
		return id;
	loc = calloc(1, sizeof(*loc));
	if (!loc || kp_grow((void **)&p->prof.location, &p->cap_loc, p->prof.n_location + 1,
			    sizeof(*p->prof.location))) {
		free(loc);
		p->oom = true;
		return 0;
	}
	perftools__profiles__location__init(loc);
	loc->id = id;
	loc->address = fr[n - 1]->addr;
	loc->mapping_id = mapping_id(p, fr[n - 1]->module);
	loc->line = calloc(n, sizeof(*loc->line));
	if (!loc->line) {
		free(loc);
		p->oom = true;
		return 0;
	}
	p->prof.location[p->prof.n_location++] = loc;
	for (i = 0; i < n; i++) {
		Perftools__Profiles__Line *line = calloc(1, sizeof(*line));

		if (!line) {
			p->oom = true;
			return id;
		}
		perftools__profiles__line__init(line);
		kp_frame_label(fr[i], label, sizeof(label));
		line->function_id = function_id(p, fr[i], label);
		line->line = fr[i]->lineNum;
		loc->line[loc->n_line++] = line;
	}
	return id;
}

static Perftools__Profiles__Label *label_num(struct pprof *p, const char *key, int64_t num)
{
	Perftools__Profiles__Label *l = calloc(1, sizeof(*l));

	if (!l) {
		p->oom = true;
		return NULL;
	}
	perftools__profiles__label__init(l);
	l->key = str_index(p, key);
	l->num = num;
	return l;
}

static Perftools__Profiles__Label *label_str(struct pprof *p, const char *key, const char *s)
{
	Perftools__Profiles__Label *l = label_num(p, key, 0);

	if (l)
		l->str = str_index(p, s);
	return l;
}

static void add_sample(struct pprof *p, const struct PmuData *d)
{
	Perftools__Profiles__Sample *smp = calloc(1, sizeof(*smp));
	const struct Stack *st;
	size_t depth = 0, cap = 0;

	if (!smp || kp_grow((void **)&p->prof.sample, &p->cap_sample, p->prof.n_sample + 1,
			    sizeof(*p->prof.sample))) {
		free(smp);
		p->oom = true;
		return;
	}
	perftools__profiles__sample__init(smp);
	p->prof.sample[p->prof.n_sample++] = smp;
	for (st = d->stack; st && depth < 1024; st = st->next) {
		const struct Symbol *fr[64];
		size_t n = 0;

		if (!st->symbol)
			continue;
		/* the inline frames of an address and its function: one Location */
		while (st->next && st->next->symbol && n + 1 < 64 && kp_sym_is_inline(st->symbol)) {
			fr[n++] = st->symbol;
			st = st->next;
		}
		fr[n++] = st->symbol;
		if (kp_grow((void **)&smp->location_id, &cap, depth + 1, sizeof(uint64_t))) {
			p->oom = true;
			return;
		}
		smp->location_id[depth++] = location_id(p, fr, n);
	}
	smp->n_location_id = depth;
	smp->value = malloc(2 * sizeof(int64_t));
	smp->label = malloc(3 * sizeof(*smp->label));
	if (!smp->value || !smp->label) {
		p->oom = true;
		return;
	}
	smp->n_value = 2;
	smp->value[0] = (int64_t)d->count;
	smp->value[1] = (int64_t)d->period;
	smp->label[0] = label_num(p, "pid", d->pid);
	smp->label[1] = label_num(p, "tid", d->tid);
	smp->label[2] = label_str(p, "comm", d->comm ? d->comm : "");
	smp->n_label = 3;
}

static Perftools__Profiles__ValueType *value_type(struct pprof *p, const char *type,
						  const char *unit)
{
	Perftools__Profiles__ValueType *v = calloc(1, sizeof(*v));

	if (!v) {
		p->oom = true;
		return NULL;
	}
	perftools__profiles__value_type__init(v);
	v->type = str_index(p, type);
	v->unit = str_index(p, unit);
	return v;
}

static void pprof_free(struct pprof *p)
{
	Perftools__Profiles__Profile *pr = &p->prof;
	size_t i, j;

	for (i = 0; i < pr->n_sample; i++) {
		for (j = 0; pr->sample[i]->label && j < pr->sample[i]->n_label; j++)
			free(pr->sample[i]->label[j]);
		free(pr->sample[i]->label);
		free(pr->sample[i]->value);
		free(pr->sample[i]->location_id);
		free(pr->sample[i]);
	}
	for (i = 0; i < pr->n_location; i++) {
		for (j = 0; j < pr->location[i]->n_line; j++)
			free(pr->location[i]->line[j]);
		free(pr->location[i]->line);
		free(pr->location[i]);
	}
	for (i = 0; i < pr->n_function; i++)
		free(pr->function[i]);
	for (i = 0; i < pr->n_mapping; i++)
		free(pr->mapping[i]);
	for (i = 0; i < pr->n_sample_type; i++)
		free(pr->sample_type[i]);
	free(pr->sample_type);
	free(pr->period_type);
	free(pr->sample);
	free(pr->location);
	free(pr->function);
	free(pr->mapping);
	free(pr->string_table);
	for (i = 0; i < p->nowned; i++)
		free(p->owned[i]);
	free(p->owned);
	kp_map_free(&p->strings);
	kp_map_free(&p->funcs);
	kp_map_free(&p->maps);
	kp_map_free(&p->locs);
}

/* events whose periods are nanoseconds: the clocks, and the profiles of time (off-cpu, wall) */
static bool is_clock(const char *evt)
{
	return evt && (!strncmp(evt, "cpu-clock", 9) || !strncmp(evt, "task-clock", 10) ||
		       !strcmp(evt, "off-cpu") || !strcmp(evt, "wall"));
}

/* pprof's name for a time: "cpu", or the profile's own ("off-cpu", "wall") */
static const char *clock_type(const char *evt)
{
	return !strcmp(evt, "off-cpu") || !strcmp(evt, "wall") ? evt : "cpu";
}

/* gzip <len> bytes of <buf> to <f> (zlib's deflate with a gzip header, like gzwrite) */
static int gzip_to(FILE *f, const uint8_t *buf, size_t len)
{
	unsigned char out[65536];
	z_stream z;
	int zr, err = 0;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory for zlib");
	z.next_in = (unsigned char *)buf;
	z.avail_in = (uInt)len; /* a profile is far below 4 GB: its packing would fail first */
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			err = kp_fail(COMMON_ERR_WRITE, -EIO,
				      "zlib could not compress the profile");
			break;
		}
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			err = -EIO; /* the stream's owner tells why */
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return err;
}

int kp_export_pprof(FILE *f, const struct PmuData *d, int n, const struct kp_profile_meta *m)
{
	struct pprof p;
	const char *evt = m && m->event ? m->event : (n ? d[0].evt : "samples");
	uint8_t *buf = NULL;
	size_t len;
	int i, err = 0;

	memset(&p, 0, sizeof(p));
	perftools__profiles__profile__init(&p.prof);
	kp_map_init(&p.strings, true);
	kp_map_init(&p.funcs, true);
	kp_map_init(&p.maps, true);
	kp_map_init(&p.locs, true);
	str_index(&p, ""); /* string_table[0] is "" */
	p.prof.sample_type = calloc(2, sizeof(*p.prof.sample_type));
	if (!p.prof.sample_type) {
		p.oom = true;
		goto out;
	}
	p.prof.n_sample_type = 2;
	p.prof.sample_type[0] = value_type(&p, "samples", "count");
	p.prof.sample_type[1] = value_type(&p, is_clock(evt) ? clock_type(evt) : evt,
					   is_clock(evt) ? "nanoseconds" : "count");
	p.prof.period_type = value_type(&p, is_clock(evt) ? clock_type(evt) : evt,
					is_clock(evt) ? "nanoseconds" : "count");
	/* a string-table index: the type name of the preferred value */
	p.prof.default_sample_type = p.prof.sample_type[1] ? p.prof.sample_type[1]->type : 0;
	if (m) {
		p.prof.duration_nanos = (int64_t)(m->duration_s * 1e9);
		p.prof.time_nanos = (int64_t)m->start_ns;
	}
	for (i = 0; i < n && !p.oom; i++) {
		if (d[i].count && d[i].stack)
			add_sample(&p, &d[i]);
		if (d[i].count && !p.prof.period)
			p.prof.period = (int64_t)(d[i].period / d[i].count);
	}
out:
	if (p.oom) {
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM,
			      "out of memory building the pprof profile");
		goto done;
	}
	len = perftools__profiles__profile__get_packed_size(&p.prof);
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
		goto done;
	}
	perftools__profiles__profile__pack(&p.prof, buf);
	err = gzip_to(f, buf, len);
done:
	free(buf);
	pprof_free(&p);
	return err;
}

/* ---- JSON ---- */

int kp_export_profile_json(FILE *f, const struct PmuData *d, int n, const struct kp_profile_meta *m)
{
	cJSON *root = cJSON_CreateObject(), *samples;
	char *text;
	int i;

	if (!root)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	cJSON_AddStringToObject(root, "event", m && m->event ? m->event : "");
	cJSON_AddNumberToObject(root, "duration_s", m ? m->duration_s : 0);
	samples = cJSON_AddArrayToObject(root, "samples");
	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject(), *stack;
		const struct Stack *st;

		cJSON_AddNumberToObject(o, "pid", d[i].pid);
		cJSON_AddNumberToObject(o, "tid", d[i].tid);
		cJSON_AddNumberToObject(o, "cpu", d[i].cpu);
		cJSON_AddStringToObject(o, "comm", d[i].comm ? d[i].comm : "");
		cJSON_AddStringToObject(o, "event", d[i].evt ? d[i].evt : "");
		cJSON_AddNumberToObject(o, "count", (double)d[i].count);
		cJSON_AddNumberToObject(o, "period", (double)d[i].period);
		stack = cJSON_AddArrayToObject(o, "stack");
		for (st = d[i].stack; st; st = st->next) {
			const struct Symbol *s = st->symbol;
			cJSON *fr;

			if (!s)
				continue;
			fr = cJSON_CreateObject();
			cJSON_AddNumberToObject(fr, "addr", (double)s->addr);
			cJSON_AddStringToObject(fr, "symbol", s->symbolName ? s->symbolName : "");
			cJSON_AddStringToObject(fr, "module", s->module ? s->module : "");
			cJSON_AddNumberToObject(fr, "offset", (double)s->offset);
			cJSON_AddStringToObject(fr, "file", s->fileName ? s->fileName : "");
			cJSON_AddNumberToObject(fr, "line", s->lineNum);
			if (kp_sym_is_inline(s))
				cJSON_AddBoolToObject(fr, "inlined", 1);
			cJSON_AddItemToArray(stack, fr);
		}
		cJSON_AddItemToArray(samples, o);
	}
	text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!text)
		return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
	fprintf(f, "%s\n", text);
	cJSON_free(text);
	return 0;
}

/* ---- hottest functions ---- */

static int cmp_hot(const void *a, const void *b)
{
	const struct kp_hot_fn *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

void kp_hot_list_free(struct kp_hot_list *l)
{
	size_t i;

	for (i = 0; i < l->nlabels; i++)
		free(l->labels[i]);
	free(l->labels);
	free(l->fns);
	memset(l, 0, sizeof(*l));
}

/* the entry of the function of <s> in <l>, created when new; NULL on OOM */
static struct kp_hot_fn *hot_entry(struct kp_hot_list *l, struct kp_map *idx, size_t *cap,
				   size_t *caplab, const struct Symbol *s, long **mark,
				   size_t *capmark)
{
	struct kp_map_slot *slot;
	char label[512], key[1024], *name, *keycopy;
	bool created;

	kp_frame_label(s, label, sizeof(label));
	if (kp_sym_is_inline(s) && strlen(label) + sizeof(" (inlined)") <= sizeof(label))
		strcat(label, " (inlined)");
	snprintf(key, sizeof(key), "%s\1%s", label, s->module ? s->module : "");
	slot = kp_map_slot(idx, key, &created);
	if (!slot)
		return NULL;
	if (!created)
		return &l->fns[(uintptr_t)slot->val - 1];
	keycopy = strdup(key);
	name = strdup(label);
	if (!keycopy || !name ||
	    kp_grow((void **)&l->labels, caplab, l->nlabels + 2, sizeof(char *)) ||
	    kp_grow((void **)&l->fns, cap, l->n + 1, sizeof(*l->fns)) ||
	    kp_grow((void **)mark, capmark, l->n + 1, sizeof(**mark))) {
		free(keycopy);
		free(name);
		slot->key = "";
		return NULL;
	}
	l->labels[l->nlabels++] = keycopy;
	l->labels[l->nlabels++] = name;
	slot->key = keycopy;
	slot->val = (void *)(uintptr_t)(l->n + 1);
	(*mark)[l->n] = -1;
	l->fns[l->n] = (struct kp_hot_fn){
		.name = name,
		.module = s->module ? s->module : "",
		.file = "",
	};
	return &l->fns[l->n++];
}

/* self samples of (function, line): the hottest line of each function wins */
struct line_count {
	size_t fn;
	const char *file;
	unsigned line;
	uint64_t count;
};

static int count_line(struct kp_map *lines, struct line_count **v, size_t *n, size_t *cap,
		      size_t fn, const struct Symbol *s, uint64_t count)
{
	char key[64];
	struct kp_map_slot *slot;
	bool created;
	char *k;

	if (!s->lineNum || !s->fileName || !*s->fileName)
		return 0;
	snprintf(key, sizeof(key), "%zu:%u:%p", fn, s->lineNum, (const void *)s->fileName);
	slot = kp_map_slot(lines, key, &created);
	if (!slot)
		return -ENOMEM;
	if (created) {
		k = strdup(key);
		if (!k || kp_grow((void **)v, cap, *n + 1, sizeof(**v))) {
			free(k);
			slot->key = "";
			return -ENOMEM;
		}
		slot->key = k;
		slot->val = (void *)(uintptr_t)(*n + 1);
		(*v)[(*n)++] = (struct line_count){ fn, s->fileName, s->lineNum, 0 };
	}
	(*v)[(uintptr_t)slot->val - 1].count += count;
	return 0;
}

static void free_line_keys(struct kp_map *lines)
{
	size_t i;

	for (i = 0; i < lines->cap; i++)
		if (lines->slots[i].key && *(const char *)lines->slots[i].key)
			free((void *)lines->slots[i].key);
	kp_map_free(lines);
}

int kp_hot_functions(const struct PmuData *d, int n, struct kp_hot_list *out)
{
	return kp_hot_functions_by(d, n, KP_WEIGHT_SAMPLES, out);
}

int kp_hot_functions_by(const struct PmuData *d, int n, enum kp_weight w, struct kp_hot_list *out)
{
	size_t cap = 0, caplab = 0, capmark = 0, nlines = 0, caplines = 0, j;
	struct kp_map idx; /* "label\1module" -> index + 1 */
	struct kp_map lines; /* "fn:line:file" -> index + 1 in linev */
	struct line_count *linev = NULL;
	long *mark = NULL; /* per function: the last record whose total it got */
	uint64_t *best = NULL; /* per function: self samples of its hottest line */
	int i;

	memset(out, 0, sizeof(*out));
	kp_map_init(&idx, true);
	kp_map_init(&lines, true);
	out->weight = w;
	for (i = 0; i < n; i++) {
		uint64_t v = kp_profile_value(&d[i], w);
		const struct Stack *st;
		const struct Stack *self = d[i].stack;
		bool leaf = true;

		/* time off the cpu is spent in the scheduler, always: its self is the first user
		 * frame, the code that waited (the kernel frames keep their totals) */
		if (w == KP_WEIGHT_TIME && d[i].evt && !strcmp(d[i].evt, KP_BLOCKED_EVT)) {
			while (self && (!self->symbol || is_kernel(self->symbol)))
				self = self->next;
			if (!self)
				self = d[i].stack;
		}
		out->samples += v;
		for (st = d[i].stack; st; st = st->next) {
			struct kp_hot_fn *h;
			size_t k;

			if (!st->symbol)
				continue;
			h = hot_entry(out, &idx, &cap, &caplab, st->symbol, &mark, &capmark);
			if (!h)
				goto nomem;
			k = (size_t)(h - out->fns);
			if (leaf && st == self) {
				h->self += v;
				if (count_line(&lines, &linev, &nlines, &caplines, k, st->symbol,
					       v))
					goto nomem;
				leaf = false;
			}
			if (mark[k] != i) {
				h->total += v;
				mark[k] = i;
			}
		}
	}
	/* the hottest line of each function (its self samples), before sorting moves them */
	best = calloc(out->n ? out->n : 1, sizeof(*best));
	if (!best)
		goto nomem;
	for (j = 0; j < nlines; j++) {
		struct kp_hot_fn *h = &out->fns[linev[j].fn];

		if (linev[j].count > best[linev[j].fn]) {
			best[linev[j].fn] = linev[j].count;
			h->file = linev[j].file;
			h->line = linev[j].line;
		}
	}
	free(best);
	free(mark);
	free(linev);
	free_line_keys(&lines);
	kp_map_free(&idx);
	if (out->n) /* qsort(NULL, 0) is undefined (UBSan): a profile without samples */
		qsort(out->fns, out->n, sizeof(*out->fns), cmp_hot);
	return 0;
nomem:
	free(mark);
	free(linev);
	free_line_keys(&lines);
	kp_map_free(&idx);
	kp_hot_list_free(out);
	return kp_fail(COMMON_ERR_NOMEM, -ENOMEM, "out of memory");
}

void kp_report_hottest(FILE *f, const struct kp_hot_list *l, int top)
{
	size_t i;

	bool time = l->weight == KP_WEIGHT_TIME;

	if (!l->samples) {
		fprintf(f, "\n No samples.\n");
		return;
	}
	if (time)
		fprintf(f, "\n %.3f ms\n\n", (double)l->samples / 1e6);
	else
		fprintf(f, "\n %" PRIu64 " samples\n\n", l->samples);
	fprintf(f, "   %7s %7s %9s  %-40s %s\n", "self", "total", time ? "self ms" : "samples",
		"function", "module / source");
	for (i = 0; i < l->n && (int)i < top; i++) {
		const struct kp_hot_fn *h = &l->fns[i];
		const char *mod = strrchr(h->module, '/');

		fprintf(f, "   %6.2f%% %6.2f%% ", 100.0 * (double)h->self / (double)l->samples,
			100.0 * (double)h->total / (double)l->samples);
		if (time)
			fprintf(f, "%9.3f  %-40s ", (double)h->self / 1e6, h->name);
		else
			fprintf(f, "%9" PRIu64 "  %-40s ", h->self, h->name);
		if (*h->file)
			fprintf(f, "%s:%u\n", h->file, h->line);
		else
			fprintf(f, "%s\n", mod ? mod + 1 : h->module);
	}
}
