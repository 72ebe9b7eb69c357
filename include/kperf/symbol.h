/*
 * symbol.h - the symbol resolver of libkperf-bpf, with libkperf's names.
 *
 * Kernel addresses resolve through /proc/kallsyms, user addresses through /proc/PID/maps
 * and the ELF/DWARF of each mapped file (separate debug files found by build-id or
 * .gnu_debuglink). Results are cached: a file shared by many processes is parsed once.
 * Symbols and stacks returned here belong to the resolver and stay valid until
 * FreeModuleData(pid) (for that pid's stacks) or SymResolverDestroy().
 */
#ifndef KPERF_SYMBOL_H
#define KPERF_SYMBOL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

struct Symbol {
	unsigned long addr; /* the address that was resolved */
	char *module; /* path of the file (or "[kernel.kallsyms]", "[vdso]") */
	char *symbolName; /* demangled name, "[unknown]" when none */
	char *mangleName; /* the name as in the symbol table */
	char *fileName; /* source file under DWARF resolution, else "" */
	unsigned int lineNum; /* source line under DWARF resolution, else 0 */
	unsigned long offset; /* addr - start of the symbol */
	unsigned long codeMapEndAddr; /* end of the symbol (file-relative) */
	unsigned long codeMapAddr; /* addr as an address in the file (before load bias) */
	uint64_t count;
};

struct Stack {
	struct Symbol *symbol;
	struct Stack *next; /* towards the caller */
	struct Stack *prev; /* towards the callee */
	uint64_t count;
};

void SymResolverInit(void);
int SymResolverRecordKernel(void);
int SymResolverRecordModule(int pid);
int SymResolverRecordModuleNoDwarf(int pid);
int SymResolverIncrUpdateModule(int pid);
int SymResolverIncrUpdateModuleNoDwarf(int pid);
int SymResolverRecordElf(const char *fileName);
int SymResolverRecordDwarf(const char *fileName);
void SymResolverDestroy(void);
struct Stack *StackToHash(int pid, unsigned long *stack, int nr);
struct Symbol *SymResolverMapAddr(int pid, unsigned long addr);
void FreeSymbolPtr(struct Symbol *symbol);
void FreeModuleData(int pid);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
