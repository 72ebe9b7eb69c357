/*
 * capstone_dl.c - libcapstone loaded on the first disassembly (capstone_dl.h says why): its
 * functions looked up once, under pthread_once. The library is not linked, so a process that
 * never disassembles never maps it.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "capstone_dl.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define CS_SONAME "libcapstone.so." STR(CS_API_MAJOR)

static struct {
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*close)(csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	cs_err (*errno_)(csh);
	const char *(*strerror)(cs_err);
	cs_insn *(*malloc)(csh);
	void (*free)(cs_insn *, size_t);
	bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
	bool (*insn_group)(csh, const cs_insn *, unsigned int);
} cs;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static char why[256];

static void load(void)
{
	void *h = dlopen(CS_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(why, sizeof(why), "cannot load %s: %s", CS_SONAME, dlerror());
		return;
	}
	*(void **)&cs.open = dlsym(h, "cs_open");
	*(void **)&cs.close = dlsym(h, "cs_close");
	*(void **)&cs.option = dlsym(h, "cs_option");
	*(void **)&cs.errno_ = dlsym(h, "cs_errno");
	*(void **)&cs.strerror = dlsym(h, "cs_strerror");
	*(void **)&cs.malloc = dlsym(h, "cs_malloc");
	*(void **)&cs.free = dlsym(h, "cs_free");
	*(void **)&cs.disasm_iter = dlsym(h, "cs_disasm_iter");
	*(void **)&cs.insn_group = dlsym(h, "cs_insn_group");
	if (!cs.open || !cs.close || !cs.option || !cs.errno_ || !cs.strerror || !cs.malloc ||
	    !cs.free || !cs.disasm_iter || !cs.insn_group) {
		snprintf(why, sizeof(why), "%s lacks a function kperf-bpf uses", CS_SONAME);
		dlclose(h);
		return;
	}
	loaded = true;
}

bool kp_cs_loaded(void)
{
	return loaded;
}

cs_err kp_cs_open(cs_arch arch, cs_mode mode, csh *handle)
{
	pthread_once(&once, load);
	return loaded ? cs.open(arch, mode, handle) : CS_ERR_MEM;
}

/* the functions below take a handle cs_open gave: the library is loaded */
cs_err kp_cs_close(csh *handle)
{
	return cs.close(handle);
}

cs_err kp_cs_option(csh handle, cs_opt_type type, size_t value)
{
	return cs.option(handle, type, value);
}

cs_err kp_cs_errno(csh handle)
{
	return loaded ? cs.errno_(handle) : CS_ERR_MEM; /* after a cs_open that failed */
}

const char *kp_cs_strerror(cs_err code)
{
	pthread_once(&once, load);
	return loaded ? cs.strerror(code) : why;
}

cs_insn *kp_cs_malloc(csh handle)
{
	return cs.malloc(handle);
}

void kp_cs_free(cs_insn *insn, size_t count)
{
	if (loaded)
		cs.free(insn, count);
}

bool kp_cs_disasm_iter(csh handle, const uint8_t **code, size_t *size, uint64_t *address,
		       cs_insn *insn)
{
	return cs.disasm_iter(handle, code, size, address, insn);
}

bool kp_cs_insn_group(csh handle, const cs_insn *insn, unsigned int group_id)
{
	return cs.insn_group(handle, insn, group_id);
}
