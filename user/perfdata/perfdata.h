/*
 * perfdata.h (internal) - the perf.data writer behind PmuBeginWrite / PmuWriteData /
 * PmuEndWrite: what writer.c (the file, its header, attributes and samples), sideband.c
 * (the COMM and MMAP records perf needs to name threads and resolve addresses) and
 * features.c (the feature sections after the data: build-ids, event names, ...) share.
 *
 * The file is perf's format as perf record writes it (tools/perf/Documentation/
 * perf.data-file-format.txt): a header, one id per event, the event attributes, the data
 * records, then the feature table and the features. Everything a PmuWriteData call adds is
 * built in memory first and written in one go at the end of the data section; a failed
 * write is cut off again, so the file never holds half a call. The header is written last,
 * by PmuEndWrite: until then the file has no perf magic and no tool takes it for complete.
 */
#ifndef KPERF_PERFDATA_H
#define KPERF_PERFDATA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "core/core.h"
#include "kperf/pmu.h"

/* what every sample carries, and so what sample_id_all appends to side-band records */
#define KP_PF_SAMPLE_TYPE                                                               \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

/* feature bits of the header (perf's HEADER_* numbers) */
enum {
	KP_PF_FEAT_TRACING_DATA = 1,
	KP_PF_FEAT_BUILD_ID = 2,
	KP_PF_FEAT_HOSTNAME = 3,
	KP_PF_FEAT_OSRELEASE = 4,
	KP_PF_FEAT_ARCH = 6,
	KP_PF_FEAT_NRCPUS = 7,
	KP_PF_FEAT_EVENT_DESC = 12,
	KP_PF_FEAT_SAMPLE_TIME = 21,
};

/* a growable byte buffer records are built in; a failed allocation sticks (oom) */
struct kp_pf_buf {
	unsigned char *p;
	size_t len, cap;
	bool oom;
};

/* <n> zeroed bytes at the end of <b>, NULL when out of memory */
void *kp_pf_buf_reserve(struct kp_pf_buf *b, size_t n);
void kp_pf_buf_put(struct kp_pf_buf *b, const void *src, size_t n);
/* a string NUL-terminated and zero-padded to a multiple of <align> bytes */
void kp_pf_buf_put_str(struct kp_pf_buf *b, const char *s, size_t align);
void kp_pf_buf_free(struct kp_pf_buf *b);

struct kp_pf_evt {
	char *name; /* as in the PmuAttr, and as PmuData.evt names it */
	struct perf_event_attr attr;
	uint64_t id; /* PERF_SAMPLE_IDENTIFIER of its samples */
};

/* a file that perf can find symbols in: read once, when a sample first names it */
struct kp_pf_module {
	char *path; /* as the samples name it: the MMAP2 file name */
	bool usable; /* its ELF was read */
	bool kernel; /* a kernel image (build-id record in kernel space) */
	bool in_file; /* an MMAP of it was written: it goes into the build-id table */
	struct kp_pf_seg *segs; /* its executable PT_LOADs, page-rounded */
	int nsegs;
	uint32_t maj, min;
	uint64_t ino;
	uint8_t build_id[20];
	size_t build_id_len;
};

struct kp_pf_seg {
	uint64_t vaddr, memsz, offset;
};

/* what sideband.c knows and has written: each mapping and thread name goes in once */
struct kp_pf_side {
	struct kp_map modules; /* path -> struct kp_pf_module */
	struct kp_map written; /* keys of the MMAP/COMM records in the file ("m pid bias path",
				* "c pid tid comm", "k") */
	struct kp_pf_module kernel; /* [kernel.kallsyms]: _text .. _etext, /sys/kernel/notes */
	bool kernel_looked;
	uint64_t ktext, ketext;
	struct kp_pf_module vdso; /* our own [vdso]: the same kernel maps the same image */
	bool vdso_looked;
};

struct kp_pf {
	pthread_mutex_t lock;
	int fd;
	char *path;
	bool created; /* the file did not exist before PmuBeginWrite */
	bool id_all; /* addIdHdr: side-band records carry the sample id fields */
	struct kp_pf_evt *evts;
	int nevts;
	uint64_t data_off, data_size; /* the data section so far */
	uint64_t first_ts, last_ts; /* of the samples written, for HEADER_SAMPLE_TIME */
	uint64_t nsamples;
	struct kp_pf_side side;
	struct kp_pf_buf tracing; /* HEADER_TRACING_DATA (tracing.c), empty without tracepoints */
};

/* ---- writer.c ---- */

/* Write <len> bytes at <off>, all of them: a short write (a full disk) is COMMON_ERR_WRITE. */
int kp_pf_pwrite(struct kp_pf *f, const void *buf, size_t len, uint64_t off);
/* The sample id fields that sample_id_all appends to a side-band record (nothing without). */
void kp_pf_put_sample_id(const struct kp_pf *f, struct kp_pf_buf *b, int pid, int tid,
			 uint64_t time, int cpu, uint64_t id);

/* ---- sideband.c ---- */

/* Append to <out> the COMM and MMAP records the <n> records of <data> (of event ids <ids>)
 * need and the file does not hold yet; the keys of what was added go to <added> (string keys, owned by it):
 * kp_pf_side_commit makes them part of the file once the write succeeded. */
int kp_pf_side_build(struct kp_pf *f, const struct PmuData *data, const uint64_t *ids, int n,
		     struct kp_pf_buf *out, struct kp_map *added);
void kp_pf_side_commit(struct kp_pf *f, struct kp_map *added);
void kp_pf_side_abort(struct kp_map *added);
void kp_pf_side_free(struct kp_pf_side *s);
/* Call <fn> for every module an MMAP record of the file names (kernel and vdso included). */
void kp_pf_side_each(struct kp_pf_side *s, void (*fn)(const struct kp_pf_module *m, void *ctx),
		     void *ctx);
/* Is <addr> a kernel address (its frame goes after PERF_CONTEXT_KERNEL)? */
bool kp_pf_kernel_addr(uint64_t addr);

/* ---- tracing.c ---- */

/* Build f->tracing from tracefs when the file has tracepoint events; 0 or a negative errno
 * (a format file that cannot be read: LIBPERF_ERR_PATH_INACCESSIBLE). */
int kp_pf_tracing_build(struct kp_pf *f);

/* ---- features.c ---- */

/* Write the feature table and the features at the end of the data section and set their
 * bits in <features> (the header's 256-bit map). */
int kp_pf_write_features(struct kp_pf *f, uint64_t features[4]);

#endif
