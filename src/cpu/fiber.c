/* fiber.c - fiber stacks (mmap with a guard page), creation, restart and
 * the sanitizer-aware switch; the register swap itself is in
 * fiber_x86_64.S, or swapcontext where there is no assembly (fiber.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_getattr_np, MAP_STACK */
#endif
#include "fiber.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef MOX_SANITIZE_ADDRESS
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef MOX_SANITIZE_THREAD
#include <sanitizer/tsan_interface.h>
#endif
/* Under valgrind a switch to a stack it does not know looks like a wild
 * stack-pointer move: every access of the fiber's frames was reported
 * invalid. Registered stacks are fine. The client requests are a few
 * no-op instructions outside valgrind; without the header (the valgrind
 * package at build time) they are left out. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define MOX__VALGRIND_STACKS 1
#endif
#endif

/* A stack's pages are mapped when first touched, so the size is address
 * space, not memory: a kernel with 128 KiB of locals runs on the default.
 * moxc builds CPU kernels with -fstack-clash-protection, so a frame larger
 * than what is left still lands on the guard page below (SIGSEGV) instead
 * of writing over the next fiber's stack. */
#if defined(MOX_SANITIZE_ADDRESS) || defined(MOX_SANITIZE_THREAD)
#define MOX__FIBER_DEFAULT_STACK (1024u * 1024u)
#else
#define MOX__FIBER_DEFAULT_STACK (256u * 1024u)
#endif
#define MOX__FIBER_MIN_STACK (16u * 1024u)

static size_t page_size(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096u;
}

/* MOX_CPU_FIBER_STACK's bytes (unset or empty: the default); false for a
 * value that is not a number of at least MOX__FIBER_MIN_STACK bytes with
 * an optional K or M suffix. */
static bool stack_size_setting(size_t *out) {
    const char *s = getenv("MOX_CPU_FIBER_STACK");
    *out = MOX__FIBER_DEFAULT_STACK;
    if (s == NULL || *s == '\0') return true;
    if (s[0] < '0' || s[0] > '9') return false; /* a sign or a space */
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned long long scale = 1;
    if (end != NULL && (*end == 'k' || *end == 'K')) scale = 1024u, end++;
    else if (end != NULL && (*end == 'm' || *end == 'M')) scale = 1024u * 1024u, end++;
    if (errno != 0 || *end != '\0' || v > SIZE_MAX / scale ||
        v * scale < MOX__FIBER_MIN_STACK)
        return false;
    *out = (size_t)(v * scale);
    return true;
}

bool mox__fiber_stack_setting_valid(char *why, size_t why_size) {
    size_t size;
    if (stack_size_setting(&size)) return true;
    snprintf(why, why_size,
             "MOX_CPU_FIBER_STACK must be a number of bytes (at least %u, optional K or M suffix), not '%.40s'",
             MOX__FIBER_MIN_STACK, getenv("MOX_CPU_FIBER_STACK"));
    return false;
}

static size_t stack_size_from_env(void) {
    size_t size;
    if (!stack_size_setting(&size)) /* a device open refused it (cpu_backend.c) */
        size = MOX__FIBER_DEFAULT_STACK;
    size_t page = page_size();
    return (size + page - 1u) / page * page;
}

static size_t stack_size_value;
static pthread_once_t stack_size_once = PTHREAD_ONCE_INIT;
static void stack_size_init(void) { stack_size_value = stack_size_from_env(); }

size_t mox__fiber_stack_size(void) {
    pthread_once(&stack_size_once, stack_size_init);
    return stack_size_value;
}

/* Runs first on a new (or restarted) fiber. */
static void fiber_start(mox__fiber *f) {
#ifdef MOX_SANITIZE_ADDRESS
    /* Completes the switch that brought us here; a fresh fiber has no fake
     * stack to restore. */
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
    f->entry(f->arg);
    fprintf(stderr, "mox: internal error: a fiber's entry returned\n");
    abort();
}

#ifdef MOX_FIBER_UCONTEXT

/* makecontext passes int arguments: the pointer travels in two halves. */
static void fiber_start_uc(unsigned hi, unsigned lo) {
    uintptr_t p = ((uintptr_t)hi << 16 << 16) | (uintptr_t)lo;
    fiber_start((mox__fiber *)p);
}

static void prepare(mox__fiber *f) {
    uintptr_t p = (uintptr_t)f;
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = f->stack;
    f->uc.uc_stack.ss_size = f->stack_size;
    f->uc.uc_link = NULL;
    makecontext(&f->uc, (void (*)(void))fiber_start_uc, 2, (unsigned)(p >> 16 >> 16), (unsigned)(p & 0xffffffffu));
}

#else

void mox__fiber_swap(void **save_sp, void *new_sp);
void mox__fiber_trampoline(void);

/* The frame mox__fiber_swap pops: r15, r14, r13, r12, rbx, rbp, then the
 * return address. It "returns" into the trampoline with the stack 16-byte
 * aligned (the slot above the return address is the aligned top). */
static void prepare(mox__fiber *f) {
    uintptr_t top = ((uintptr_t)f->stack + f->stack_size) & ~(uintptr_t)15;
    void **frame = (void **)(top - 7 * sizeof(void *));
    void (*start)(mox__fiber *) = fiber_start;
    void (*tramp)(void) = mox__fiber_trampoline;
    memset(frame, 0, 7 * sizeof(void *));
    frame[2] = f;                                  /* r13: argument */
    memcpy(&frame[3], &start, sizeof start);       /* r12: function */
    memcpy(&frame[6], &tramp, sizeof tramp);       /* return address */
    f->sp = frame;
}

#endif

void mox__fiber_init_thread(mox__fiber *self) {
    memset(self, 0, sizeof *self);
#ifdef MOX_SANITIZE_ADDRESS
    /* ASan needs the bounds of the stack we switch back to. */
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *addr = NULL;
        size_t size = 0;
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            self->stack = addr;
            self->stack_size = size;
        }
        pthread_attr_destroy(&attr);
    }
#endif
#ifdef MOX_SANITIZE_THREAD
    self->tsan_fiber = __tsan_get_current_fiber();
#endif
}

int mox__fiber_create(mox__fiber *f, size_t stack_size, void (*entry)(void *), void *arg) {
    size_t page = page_size();
    memset(f, 0, sizeof *f);
    stack_size = (stack_size + page - 1u) / page * page;
    if (stack_size == 0 || stack_size > SIZE_MAX - page) return EINVAL;
    void *map = mmap(NULL, stack_size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (map == MAP_FAILED) return ENOMEM;
    /* Stacks grow down: an overflow runs into this page and faults. */
    if (mprotect(map, page, PROT_NONE) != 0) {
        munmap(map, stack_size + page);
        return ENOMEM;
    }
    f->map = map;
    f->map_size = stack_size + page;
    f->stack = (char *)map + page;
    f->stack_size = stack_size;
    f->entry = entry;
    f->arg = arg;
#ifdef MOX_SANITIZE_THREAD
    f->tsan_fiber = __tsan_create_fiber(0);
#endif
#ifdef MOX__VALGRIND_STACKS
    f->valgrind_stack = VALGRIND_STACK_REGISTER(f->stack, (char *)f->stack + f->stack_size);
#endif
    prepare(f);
    return 0;
}

void mox__fiber_restart(mox__fiber *f) {
#ifdef MOX_SANITIZE_ADDRESS
    /* Frames abandoned mid-function leave poisoned redzones behind. */
    __asan_unpoison_memory_region(f->stack, f->stack_size);
    f->asan_fake_stack = NULL;
#endif
#ifdef MOX_SANITIZE_THREAD
    /* TSan keeps a shadow call stack per fiber; the abandoned one would
     * never be popped. */
    __tsan_destroy_fiber(f->tsan_fiber);
    f->tsan_fiber = __tsan_create_fiber(0);
#endif
    prepare(f);
}

void mox__fiber_destroy(mox__fiber *f) {
    if (f->map == NULL) return;
#ifdef MOX_SANITIZE_ADDRESS
    __asan_unpoison_memory_region(f->stack, f->stack_size);
#endif
#ifdef MOX_SANITIZE_THREAD
    __tsan_destroy_fiber(f->tsan_fiber);
#endif
#ifdef MOX__VALGRIND_STACKS
    VALGRIND_STACK_DEREGISTER(f->valgrind_stack);
#endif
    munmap(f->map, f->map_size);
    memset(f, 0, sizeof *f);
}

void mox__fiber_switch(mox__fiber *from, mox__fiber *to) {
#ifdef MOX_SANITIZE_ADDRESS
    __sanitizer_start_switch_fiber(&from->asan_fake_stack, to->stack, to->stack_size);
#endif
#ifdef MOX_SANITIZE_THREAD
    /* Flags 0: the switch synchronises, as a real hand-over does. */
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
#ifdef MOX_FIBER_UCONTEXT
    swapcontext(&from->uc, &to->uc);
#else
    mox__fiber_swap(&from->sp, to->sp);
#endif
#ifdef MOX_SANITIZE_ADDRESS
    __sanitizer_finish_switch_fiber(from->asan_fake_stack, NULL, NULL);
#endif
}
