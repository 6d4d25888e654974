/* buffer.h - the buffer object's internals. */
#ifndef MOX_CORE_BUFFER_H
#define MOX_CORE_BUFFER_H

#include <stdatomic.h>

#include <mox/buffer.h>

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

#endif
