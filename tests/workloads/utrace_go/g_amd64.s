// getg for x86_64: the runtime keeps g in the thread-local slot at fs:-8, which (TLS) names
#include "textflag.h"

TEXT ·getg(SB),NOSPLIT,$0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
