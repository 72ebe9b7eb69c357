/*
 * test_sym_py.c - Python frames in the resolver (user/sym/sym_py.c): a stack mixing native
 * addresses and Python frames (bpf/pyframes.h: KP_PY_TAG | a code object's address) resolves
 * each Python frame to "module.qualname" with the .py file as module and fileName and the
 * function's first line; a frame whose code object was not handed over yet is "[unknown]" in
 * "[python]" and is named in place once it is; another process's code objects are its own.
 */
#include <criterion/criterion.h>
#include <linux/types.h>
#include <unistd.h>

#include "kperf/symbol.h"
#include "pyframes.h"
#include "sym/sym.h"

static void fini(void)
{
	kp_sym_destroy();
}

TestSuite(sym_py, .fini = fini, .timeout = 30);

Test(sym_py, python_frames_named_from_their_code_objects)
{
	pid_t pid = getpid();
	uint64_t ips[3] = { KP_PY_TAG | 0x7f0000001000ULL, KP_PY_TAG | 0x7f0000002000ULL,
			    (uint64_t)(uintptr_t)&kp_sym_add_pycode + 4 };
	struct Stack *st;

	cr_assert_eq(kp_sym_add_pycode(pid, 0x7f0000001000ULL, "Outer.inner", "/srv/app/pkg/mod.py",
				       42),
		     0);
	cr_assert_eq(kp_sym_resolve_stack(pid, ips, 3, 0, &st), 0);
	cr_assert_str_eq(st->symbol->symbolName, "mod.Outer.inner");
	cr_assert_str_eq(st->symbol->mangleName, "Outer.inner");
	cr_assert_str_eq(st->symbol->module, "/srv/app/pkg/mod.py");
	cr_assert_str_eq(st->symbol->fileName, "/srv/app/pkg/mod.py");
	cr_assert_eq(st->symbol->lineNum, 42);
	/* not handed over yet, then named in place: stacks already returned see the name */
	cr_assert_str_eq(st->next->symbol->symbolName, "[unknown]");
	cr_assert_str_eq(st->next->symbol->module, "[python]");
	cr_assert_eq(kp_sym_add_pycode(pid, 0x7f0000002000ULL, "<module>", "/tmp/s.py", 1), 0);
	cr_assert_str_eq(st->next->symbol->symbolName, "s.<module>");
	cr_assert_eq(st->next->symbol->lineNum, 1);
	cr_assert_str_eq(st->next->next->symbol->symbolName, "kp_sym_add_pycode");
	/* a package's __init__.py defines the package */
	ips[0] = KP_PY_TAG | 0x7f0000003000ULL;
	cr_assert_eq(kp_sym_add_pycode(pid, 0x7f0000003000ULL, "dumps",
				       "/usr/lib/python3.11/json/__init__.py", 183),
		     0);
	cr_assert_eq(kp_sym_resolve_stack(pid, ips, 1, 0, &st), 0);
	cr_assert_str_eq(st->symbol->symbolName, "json.dumps");
	/* the same code address in another process is another code object */
	cr_assert_eq(kp_sym_resolve_stack(1, ips, 1, 0, &st), 0);
	cr_assert_str_eq(st->symbol->symbolName, "[unknown]");
}
