/* buffer.h - the buffer object's internals. */
#ifndef MOX_CORE_BUFFER_H
#define MOX_CORE_BUFFER_H

#include <stdatomic.h>

#include <mox/buffer.h>

#include "debug_check.h"
#include "device.h"
#include "tracker.h"

struct mox_buffer {
    uint32_t magic;            /* MOX__MAGIC_BUFFER while live (debug_check.h) */
    _Atomic unsigned refs;
    mox_device *device;        /* retained */
    const mox_type *type;
    size_t length;
    uint64_t bytes;            /* length * size */
    void *handle;              /* backend handle */
    void *address;             /* what kernels get */
    mox__tracker tracker;      /* device lock */
};

/* The runtime's own references (dispatches, completions, results), inline:
 * only the last drop calls out (mox__buffer_destroy). A drop is checked as
 * mox_buffer_release (debug builds); a reference is taken of a buffer the
 * caller checked. */
static inline mox_buffer *mox__buffer_ref(mox_buffer *b)
{
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    return b;
}
void mox__buffer_destroy(mox_buffer *b);
static inline void mox__buffer_unref(mox_buffer *b)
{
    MOX__CHECK_IN(b, BUFFER, "mox_buffer_release");
    if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
        mox__buffer_destroy(b);
}
/* Drops n (> 0) references at once (a batch's completion: all that its
 * dispatches took of one buffer). */
static inline void mox__buffer_unref_n(mox_buffer *b, uint32_t n)
{
    MOX__CHECK_IN(b, BUFFER, "mox_buffer_release");
    if (atomic_fetch_sub_explicit(&b->refs, n, memory_order_acq_rel) == n)
        mox__buffer_destroy(b);
}

#endif
