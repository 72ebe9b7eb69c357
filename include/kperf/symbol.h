/*
 * symbol.h - the symbol resolver, with libkperf's names and struct layouts.
 *
 * Kernel addresses resolve through /proc/kallsyms, user addresses through /proc/PID/maps
 * and the ELF/DWARF of each mapped file (separate debug files found by build-id or
 * .gnu_debuglink). Results are cached: a file shared by many processes is parsed once.
 * Symbols and stacks returned by StackToHash / SymResolverMapAddr belong to the resolver and
 * stay valid until FreeModuleData(pid) (for that pid) or SymResolverDestroy(); the StackAsm
 * lists and the strings of GetAsmCodeByAddr / SymGetBuildId belong to the caller.
 *
 * The structs are byte for byte libkperf's (a layout test holds the offsets); kperf-bpf's
 * additions are in kperf.h.
 */
#ifndef KPERF_SYMBOL_H
#define KPERF_SYMBOL_H

#include <stdbool.h>
#include <linux/types.h>

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
	unsigned int firstLine; /* DWARF: the line where the function starts, else 0 */
	char *mntPoint; /* for a process in another mount namespace (a container), the directory
	                 * that is its root here ("/proc/PID/root" when no other names it):
	                 * mntPoint + module is the file; "" for the caller's own namespace */
};

struct Stack {
	struct Symbol *symbol;
	struct Stack *next; /* towards the caller */
	struct Stack *prev; /* towards the callee */
} __attribute__((aligned(64)));

/* A disassembly is one list: for each function of the range a node that names it
 * (funcName as objdump labels it, "<hot_loop>" or "<hot_loop+0x4>" when the range starts
 * inside it; asmCode NULL), followed by one node per instruction (funcName NULL). */
struct StackAsm {
	char *funcName;
	unsigned long funcStartAddr; /* file address where the label is */
	unsigned long functFileOffset; /* its offset in the file */
	struct StackAsm *next;
	struct AsmCode *asmCode;
};

struct AsmCode {
	unsigned long addr; /* file address of the instruction */
	char *code; /* "movq -8(%rbp), %rax" (x86: AT&T syntax), "je 0x120e <hot_loop+0x31>" */
	char *fileName; /* source file of the instruction (DWARF), else "" */
	unsigned int lineNum;
};

/* The int functions return 0 (SUCCESS), or a LIBSYM_* code with Perrorno()/Perror() set; the
 * pointer functions NULL. A pid never recorded is recorded (without DWARF) on first lookup. */
void SymResolverInit(void);
int SymResolverRecordKernel(void);
int SymResolverRecordModule(int pid);
int SymResolverRecordModuleNoDwarf(int pid);
/* Record the libraries <pid> loaded since it was recorded. */
int SymResolverIncrUpdateModule(int pid);
int SymResolverIncrUpdateModuleNoDwarf(int pid);
/* Tell the resolver that <moduleName> is mapped in <pid> at <startAddr> (a mapping the caller
 * saw being created, e.g. from a PERF_RECORD_MMAP). */
int SymResolverUpdateModule(int pid, const char *moduleName, unsigned long startAddr);
int SymResolverUpdateModuleNoDwarf(int pid, const char *moduleName, unsigned long startAddr);
void SymResolverDestroy(void);
struct Stack *StackToHash(int pid, unsigned long *stack, int nr);
struct Symbol *SymResolverMapAddr(int pid, unsigned long addr);
/* The instructions that start in [startAddr, endAddr) of the ELF file <moduleName> (file
 * addresses, as nm and objdump print them), with their source lines; free with FreeAsmStack. */
struct StackAsm *SymResolverAsmCode(const char *moduleName, unsigned long startAddr,
				    unsigned long endAddr);
/* The symbol (with file and line) of the file address <startAddr> of <moduleName>. */
struct Symbol *SymResolverMapCodeAddr(const char *moduleName, unsigned long startAddr);
/* Symbols belong to the resolver (as in libkperf): accepted and ignored, never a double free */
void FreeSymbolPtr(struct Symbol *symbol);
void FreeModuleData(int pid);
void FreeAsmStack(struct StackAsm *stackAsm);
/* The GNU build-id of <moduleName> as lower-case hex in *buildId (malloc'd: free() it). */
int SymGetBuildId(const char *moduleName, char **buildId);
/* The disassembly of [startAddr, endAddr) of <moduleName> as text, one instruction a line
 * ("    11dd:\t55\tpushq\t%rbp\n"), in *asmCode (malloc'd: free() it). */
int GetAsmCodeByAddr(const char *moduleName, unsigned long startAddr, unsigned long endAddr,
		     char **asmCode);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
