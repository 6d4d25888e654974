/* fiber_x86_64.S - the context switch of the CPU executor's fibers (SysV
 * x86-64). A suspended fiber's stack holds its callee-saved registers and
 * a return address; switching is pushing ours, swapping stack pointers and
 * popping theirs: a few nanoseconds, no system call. The FP environment
 * (MXCSR, x87 control word) belongs to the thread and is deliberately not
 * switched: kernels never change it. */
#if defined(__x86_64__) && !defined(MOX_FIBER_UCONTEXT)

    .text

/* void mox__fiber_swap(void **save_sp, void *new_sp) */
    .globl  mox__fiber_swap
    .hidden mox__fiber_swap
    .type   mox__fiber_swap, @function
    .p2align 4
mox__fiber_swap:
    .cfi_startproc
    pushq   %rbp
    pushq   %rbx
    pushq   %r12
    pushq   %r13
    pushq   %r14
    pushq   %r15
    movq    %rsp, (%rdi)
    movq    %rsi, %rsp
    popq    %r15
    popq    %r14
    popq    %r13
    popq    %r12
    popq    %rbx
    popq    %rbp
    ret
    .cfi_endproc
    .size   mox__fiber_swap, .-mox__fiber_swap

/* First code a new fiber runs, "returned to" by mox__fiber_swap from the
 * frame fiber.c builds: %r12 = function, %r13 = its argument. The stack is
 * 16-byte aligned here, so the call leaves it as the ABI wants at entry.
 * The function never returns. */
    .globl  mox__fiber_trampoline
    .hidden mox__fiber_trampoline
    .type   mox__fiber_trampoline, @function
    .p2align 4
mox__fiber_trampoline:
    .cfi_startproc
    .cfi_undefined rip
    movq    %r13, %rdi
    callq   *%r12
    ud2
    .cfi_endproc
    .size   mox__fiber_trampoline, .-mox__fiber_trampoline

#endif

    .section .note.GNU-stack,"",%progbits
