/*
 * asmtest.h - objdump as the oracle of the disassembly tests: its function labels
 * ("<hot_loop> (File Offset: 0x11dd)"), its instructions with their bytes and mnemonics, and
 * the source line `objdump -l` puts each under (the last one printed in the function, as a
 * reader of its output sees it).
 */
#ifndef KPERF_ASMTEST_H
#define KPERF_ASMTEST_H

#include <regex.h>

#include "symtest.h"

#define OD_MAX_HDR 64
#define OD_MAX_INSN 4096

struct od_hdr {
	unsigned long addr, off;
	char name[256];
};

struct od_insn {
	unsigned long addr;
	char mnemonic[32];
	char bytes[128]; /* "48 c7 45 f8 00 00 00 00", continuation lines joined */
	unsigned line;
};

struct od {
	struct od_hdr hdr[OD_MAX_HDR];
	int nhdr;
	struct od_insn insn[OD_MAX_INSN];
	int n;
};

/* `<tool> -d -l -F [-M <m_opt>]` of [s, e) of <file>, parsed into <o> */
static inline int od_run(const char *tool, const char *m_opt, const char *file, unsigned long s,
			 unsigned long e, struct od *o)
{
	char cmd[8192], *out, *line, *next;
	regex_t rh, rl, ri;
	regmatch_t m[5];
	unsigned cur = 0;

	memset(o, 0, sizeof(*o));
	snprintf(cmd, sizeof(cmd), "%s -d -l -F %s%s --start-address=%#lx --stop-address=%#lx '%s'",
		 tool, m_opt ? "-M " : "", m_opt ? m_opt : "", s, e, file);
	out = tu_run(cmd, NULL);
	if (!out)
		return -1;
	regcomp(&rh, "^([0-9a-f]+) (<.*>) \\(File Offset: 0x([0-9a-f]+)\\):$", REG_EXTENDED);
	regcomp(&rl, "^/.*:([0-9]+)( \\(discriminator [0-9]+\\))?$", REG_EXTENDED);
	regcomp(&ri, "^ *([0-9a-f]+):\t([^\t]*)(\t(.*))?$", REG_EXTENDED);
	for (line = out; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!regexec(&rh, line, 5, m, 0) && o->nhdr < OD_MAX_HDR) {
			struct od_hdr *h = &o->hdr[o->nhdr++];

			h->addr = strtoul(line + m[1].rm_so, NULL, 16);
			h->off = strtoul(line + m[3].rm_so, NULL, 16);
			snprintf(h->name, sizeof(h->name), "%.*s", (int)(m[2].rm_eo - m[2].rm_so),
				 line + m[2].rm_so);
			cur = 0;
		} else if (!regexec(&rl, line, 5, m, 0)) {
			cur = (unsigned)strtoul(line + m[1].rm_so, NULL, 10);
		} else if (!regexec(&ri, line, 5, m, 0)) {
			char bytes[128];
			int bl = (int)(m[2].rm_eo - m[2].rm_so);

			snprintf(bytes, sizeof(bytes), "%.*s", bl, line + m[2].rm_so);
			while (bl && bytes[bl - 1] == ' ')
				bytes[--bl] = '\0';
			if (m[3].rm_so < 0) {
				/* the rest of a long instruction's bytes */
				if (o->n) {
					struct od_insn *p = &o->insn[o->n - 1];
					size_t pl = strlen(p->bytes);

					snprintf(p->bytes + pl, sizeof(p->bytes) - pl, " %s",
						 bytes);
				}
				continue;
			}
			if (o->n < OD_MAX_INSN) {
				struct od_insn *in = &o->insn[o->n++];

				in->addr = strtoul(line + m[1].rm_so, NULL, 16);
				snprintf(in->bytes, sizeof(in->bytes), "%s", bytes);
				sscanf(line + m[4].rm_so, "%31s", in->mnemonic);
				in->line = cur;
			}
		}
	}
	regfree(&rh);
	regfree(&rl);
	regfree(&ri);
	free(out);
	return 0;
}

/* arm64 objdump prints the instruction as one 32-bit word ("a9bd7bfd"): as file bytes */
static inline void od_word_to_bytes(struct od_insn *in)
{
	unsigned long w = strtoul(in->bytes, NULL, 16);

	if (strlen(in->bytes) == 8)
		snprintf(in->bytes, sizeof(in->bytes), "%02lx %02lx %02lx %02lx", w & 0xff,
			 (w >> 8) & 0xff, (w >> 16) & 0xff, w >> 24);
}

/* the address and size of <sym> in <bin> (nm -S), 0 when absent */
static inline unsigned long nm_size(const char *nm, const char *bin, const char *sym,
				    unsigned long *size)
{
	char cmd[PATH_MAX + 128], *out, *p;
	unsigned long a = 0;

	*size = 0;
	snprintf(cmd, sizeof(cmd), "%s -S '%s' 2>/dev/null", nm, bin);
	out = tu_run(cmd, NULL);
	for (p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		char name[256], type;
		unsigned long v, s;

		if (sscanf(p, "%lx %lx %c %255s", &v, &s, &type, name) == 4 && !strcmp(name, sym)) {
			a = v;
			*size = s;
			break;
		}
	}
	free(out);
	return a;
}

#endif
