/*
 * capstone_dl.h - capstone (disassembly: sym_asm.c, utrace/elf_scan.c) loaded when first
 * needed, not at the library's load: libcapstone's relocated tables are 3.2 MB of every
 * process's RSS that links it, and most (the agent, a profile) never disassemble. Include it
 * instead of <capstone/capstone.h>: the cs_* calls below go to kp_cs_*, which dlopen the
 * libcapstone.so.N the headers are of on the first call. When it cannot be loaded, cs_open
 * fails (CS_ERR_MEM) and cs_strerror says why.
 */
#ifndef KPERF_SYM_CAPSTONE_DL_H
#define KPERF_SYM_CAPSTONE_DL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <capstone/capstone.h>

cs_err kp_cs_open(cs_arch arch, cs_mode mode, csh *handle);
cs_err kp_cs_close(csh *handle);
cs_err kp_cs_option(csh handle, cs_opt_type type, size_t value);
cs_err kp_cs_errno(csh handle);
const char *kp_cs_strerror(cs_err code);
cs_insn *kp_cs_malloc(csh handle);
void kp_cs_free(cs_insn *insn, size_t count);
bool kp_cs_disasm_iter(csh handle, const uint8_t **code, size_t *size, uint64_t *address,
		       cs_insn *insn);
bool kp_cs_insn_group(csh handle, const cs_insn *insn, unsigned int group_id);
/* true once libcapstone is mapped (tests: nothing maps it before a disassembly) */
bool kp_cs_loaded(void);

#define cs_open kp_cs_open
#define cs_close kp_cs_close
#define cs_option kp_cs_option
#define cs_errno kp_cs_errno
#define cs_strerror kp_cs_strerror
#define cs_malloc kp_cs_malloc
#define cs_free kp_cs_free
#define cs_disasm_iter kp_cs_disasm_iter
#define cs_insn_group kp_cs_insn_group

#endif
