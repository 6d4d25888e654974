/* fiber.h - minimal user-space execution contexts for the CPU block
 * executor: each thread of a cooperative block runs on a fiber of the
 * worker thread, and fibers hand control to each other explicitly.
 *
 * x86-64 switches with a few instructions of assembly (fiber_x86_64.S);
 * other targets, or builds with MOX_FIBER_UCONTEXT defined, use
 * swapcontext (correct but it makes a sigprocmask system call per switch).
 * Switches tell ASan and TSan about the change of stack when the build
 * defines MOX_SANITIZE_ADDRESS / MOX_SANITIZE_THREAD.
 *
 * A fiber never migrates: it is created, switched to and destroyed on one
 * thread. (Kernel code caches addresses of thread-local storage, which is
 * how block-shared memory works, so this is not just a convenience.)
 */
#ifndef MOX_CPU_FIBER_H
#define MOX_CPU_FIBER_H

#include <stdbool.h>
#include <stddef.h>

#if !defined(MOX_FIBER_UCONTEXT) && !defined(__x86_64__)
#define MOX_FIBER_UCONTEXT 1
#endif

#ifdef MOX_FIBER_UCONTEXT
#include <ucontext.h>
#endif

typedef struct mox__fiber {
#ifdef MOX_FIBER_UCONTEXT
    ucontext_t uc;
#else
    void *sp; /* saved stack pointer while suspended */
#endif
    void *map;         /* mmap'ed region (guard page + stack), NULL for a thread's own context */
    size_t map_size;
    void *stack;       /* usable stack: [stack, stack + stack_size) */
    size_t stack_size;
    void (*entry)(void *);
    void *arg;
#ifdef MOX_SANITIZE_ADDRESS
    void *asan_fake_stack;
#endif
#ifdef MOX_SANITIZE_THREAD
    void *tsan_fiber;
#endif
    unsigned valgrind_stack; /* its stack as valgrind knows it (fiber.c; 0 outside valgrind) */
} mox__fiber;

/* The stack size for new fibers: MOX_CPU_FIBER_STACK (bytes, optional K or
 * M suffix, at least 16 KiB) or 256 KiB (1 MiB under sanitizers, whose
 * frames are larger), rounded up to whole pages. Read once per process. */
size_t mox__fiber_stack_size(void);

/* Whether MOX_CPU_FIBER_STACK is unset, empty or such a size; when not,
 * `why` says so (opening a CPU device then fails with MOX_ERR_CONFIG). */
bool mox__fiber_stack_setting_valid(char *why, size_t why_size);

/* Makes `self` stand for the calling thread's own context, so that fibers
 * can switch back to it. Nothing to destroy. */
void mox__fiber_init_thread(mox__fiber *self);

/* Maps a stack of `stack_size` bytes with a guard page below it and
 * prepares `f` so that the first switch to it calls entry(arg). `entry`
 * must never return (switch away instead). Returns 0 or an errno value
 * (ENOMEM); on failure `f` holds nothing. */
int mox__fiber_create(mox__fiber *f, size_t stack_size, void (*entry)(void *), void *arg);

/* Abandons whatever `f` was doing (it must be suspended, not running): the
 * next switch to it calls entry(arg) again on a clean stack. */
void mox__fiber_restart(mox__fiber *f);

/* Unmaps the stack. `f` must be suspended, not running. */
void mox__fiber_destroy(mox__fiber *f);

/* Suspends the running context into `from` and resumes `to`. Returns when
 * something switches back to `from`. */
void mox__fiber_switch(mox__fiber *from, mox__fiber *to);

#endif
