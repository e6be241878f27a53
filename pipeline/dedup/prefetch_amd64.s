#include "textflag.h"

// func prefetch(addrs *uintptr, n int)
// Asks the processor to bring the cache line of each of the n addresses in
// closer (PREFETCHT0), without waiting for any: a load would block the
// reorder buffer until its miss is served.
TEXT ·prefetch(SB), NOSPLIT, $0-16
	MOVQ addrs+0(FP), SI
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE done
loop:
	MOVQ (SI), AX
	PREFETCHT0 (AX)
	ADDQ $8, SI
	DECQ CX
	JNZ loop
done:
	RET
