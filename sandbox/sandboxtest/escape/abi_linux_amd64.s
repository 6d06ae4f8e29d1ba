#include "textflag.h"

// func int80Getpid() int32
TEXT ·int80Getpid(SB), NOSPLIT, $0-4
	MOVL $20, AX // __NR_getpid, i386 table
	INT  $0x80
	MOVL AX, ret+0(FP)
	RET
