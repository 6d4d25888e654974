/* result.c - mox_result: immutable, refcounted outcomes of ops. Every clone
 * of a shared op hands out the same pointer (A7). */
#include <string.h>

#include "alloc.h"
#include "error.h"
#include "op.h"

static mox_result oom_result = {
    .refs = 1,
    .immortal = true,
    .status = MOX_ERR_OUT_OF_MEMORY,
};

const mox_result *mox__result_oom(void) { return &oom_result; }

/* What every successful batch resolves to: it carries nothing, so one
 * shared immortal result saves an allocation (made on the completion
 * thread, freed on the user's) per batch. */
static mox_result ok_result = {
    .refs = 1,
    .immortal = true,
    .status = MOX_OK,
};

const mox_result *mox__result_ok_shared(void) { return &ok_result; }

static mox_result *alloc_result(size_t buffers)
{
    size_t size = sizeof(mox_result) + buffers * sizeof(mox_buffer *);
    mox_result *r = mox__block_alloc(size);
    if (!r)
        return NULL;
    memset(r, 0, size);
    atomic_init(&r->refs, 1);
    return r; /* the caller sets buffer_count to `buffers`: the block's size at free */
}

const mox_result *mox__result_error(mox_error *error)
{
    mox_result *r = alloc_result(0);
    if (!r) {
        mox_error_release(error);
        return mox__result_oom();
    }
    r->status = mox_error_code(error);
    r->error = error;
    return r;
}

const mox_result *mox__result_ok(void)
{
    mox_result *r = alloc_result(0);
    if (!r)
        return mox__result_oom();
    r->status = MOX_OK;
    return r;
}

const mox_result *mox__result_args(mox_buffer **buffers, size_t count)
{
    mox_result *r = alloc_result(count);
    if (!r) {
        for (size_t i = 0; i < count; i++)
            mox__buffer_unref(buffers[i]);
        return mox__result_oom();
    }
    r->status = MOX_OK;
    r->buffer_count = count;
    r->buffers = r->inline_buffers;
    memcpy(r->buffers, buffers, count * sizeof *buffers);
    return r;
}

const mox_result *mox__result_bytes(void *bytes, size_t size)
{
    mox_result *r = alloc_result(0);
    if (!r) {
        mox__free(bytes);
        return mox__result_oom();
    }
    r->status = MOX_OK;
    r->bytes = bytes;
    r->size = size;
    return r;
}

const mox_result *mox_result_retain(const mox_result *result)
{
    mox_result *r = (mox_result *)result;
    if (r && !r->immortal)
        atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
    return result;
}

void mox_result_release(const mox_result *result)
{
    mox_result *r = (mox_result *)result;
    if (!r || r->immortal || atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (size_t i = 0; i < r->buffer_count; i++)
        mox__buffer_unref(r->buffers[i]);
    if (r->destroy)
        r->destroy(r->value);
    mox__free(r->bytes);
    mox_error_release(r->error);
    mox__block_free(r, sizeof *r + r->buffer_count * sizeof(mox_buffer *));
}

mox_status mox_result_status(const mox_result *r) { return r ? r->status : MOX_ERR_INVALID_ARGUMENT; }
const mox_error *mox_result_error(const mox_result *r)
{
    if (r == &oom_result)
        return mox__error_oom();
    return r ? r->error : NULL;
}
size_t mox_result_buffer_count(const mox_result *r) { return r ? r->buffer_count : 0; }

mox_buffer *mox_result_buffer(const mox_result *r, size_t index)
{
    return r && index < r->buffer_count ? r->buffers[index] : NULL;
}

const void *mox_result_bytes(const mox_result *r, size_t *size)
{
    if (size)
        *size = r ? r->size : 0;
    return r ? r->bytes : NULL;
}

void *mox_result_value(const mox_result *r) { return r ? r->value : NULL; }
