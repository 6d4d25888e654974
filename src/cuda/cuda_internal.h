/* src/cuda/cuda_internal.h - the CUDA backend's own objects and the
 * internal interface between its files. The core talks to the backend
 * only through src/hal/hal.h (vtable in cuda_backend.c).
 *
 *   mox__cuda_dev    one device: primary context, streams, the gate status
 *                    pool, host flags, staging, plan cache, completion thread.
 *   mox__cuda_kernel a loaded kernel (CUfunction, attributes, param sizes).
 *   mox__cuda_plan   a launch shape (kernels, geometry, edges), cached; its
 *                    CUDA graph is built once.
 *   mox__cuda_inst   one runnable copy of a plan: its own gate slots, deps
 *                    array, host flag and instantiated graph. Re-launched
 *                    only when idle, so no two runs share status words.
 *   mox__cuda_sub    the backend's state of one core submission (sub->be).
 *   mox__cuda_group  one launch: one or more submissions of one stream
 *                    coalesced into a single graph launch, one event.
 *
 * The declarations are split by concern over the headers included below
 * (cuda_state.h, cuda_launch.h, cuda_foreign.h, cuda_plan.h,
 * cuda_device.h); the backend's files include this one alone.
 */
#ifndef MOX_CUDA_INTERNAL_H
#define MOX_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <mox/kernel_abi.h>
#include <mox/module.h>
#include <mox/status.h>

#include "core/alloc.h"
#include "core/sync.h"
#include "hal/hal.h"
#include "cuda/cuda_api.h"

#define MOX__CUDA_STREAMS 4u
#define MOX__CUDA_STREAM_PLANS 4u /* recent plans compared per stream (cuda_plan.c) */
/* Gate status words: 2 per slot. Slot 0 reads FAILED forever (a dependency
 * on an earlier dispatch known to have failed), slot 1 reads OK forever (one
 * known to have succeeded), so a plan's deps layout never depends on timing. */
#define MOX__CUDA_POOL_SLOTS (1u << 20)
#define MOX__CUDA_SENTINEL_SLOT 0u
#define MOX__CUDA_OK_SLOT 1u
#define MOX__CUDA_FIRST_SLOT 2u
/* Coalescing: a submission waits in its stream's pending list while that
 * stream already has `defer_depth` launches queued (MOX_CUDA_DEFER_DEPTH,
 * default below; 0 turns coalescing off); at most MERGE_SUBS submissions
 * (MERGE_NODES dispatches) go into one launch. */
#define MOX__CUDA_DEFER_DEPTH 2u
/* MOX_CUDA_UPLOAD_NODE_KIB's default (docs/cuda-backend.md, "Uploads in
 * graphs"). */
#define MOX__CUDA_UPLOAD_NODE_KIB 256u
#define MOX__CUDA_MERGE_SUBS 16u
#define MOX__CUDA_MERGE_NODES 256u
/* Successors a launch's group holds without an allocation (cuda_group.c). */
#define MOX__CUDA_SUCCS_INLINE 2u

typedef struct mox__cuda_dev mox__cuda_dev;
typedef struct mox__cuda_plan mox__cuda_plan;
typedef struct mox__cuda_inst mox__cuda_inst;
typedef struct mox__cuda_group mox__cuda_group;

/* CLOCK_MONOTONIC in ns (the core's mox__now_ns clock; the backend's
 * tests link it without the core). */
static inline uint64_t mox__cuda_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void mox__cuda_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ---- errors (cuda_error.c) ---- */

/* The mox code for a driver result (DEVICE_LOST for sticky faults,
 * ALLOCATION_FAILED for out of memory, MODULE_LOAD for bad images...). */
mox_status mox__cuda_status_of(CUresult result);
/* The one conversion point: records "<call>: <CUDA name> (<text>)
 * [context]" as the calling thread's backend error; returns its code. */
mox_status mox__cuda_fail(const mox__cuda_api *api, CUresult result, const char *call,
                          const char *context);
/* Records an error that did not come from a driver call; returns `code`. */
mox_status mox__cuda_error(mox_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Message of the last error recorded on this thread. */
const char *mox__cuda_last_message(void);
/* A core error object from the last recorded error. */
mox_error *mox__cuda_last_error(mox_status code);

/* The backend's objects by concern, in dependency order. */
#include "cuda/cuda_state.h"
#include "cuda/cuda_launch.h"
#include "cuda/cuda_foreign.h"
#include "cuda/cuda_plan.h"
#include "cuda/cuda_device.h"

/* ---- completion thread (cuda_complete.c) ---- */

mox_status mox__cuda_completion_start(mox__cuda_dev *dev);
void mox__cuda_completion_stop(mox__cuda_dev *dev);
/* Adds a group to the in-flight list (launched, or failed before launch:
 * then completed without querying). Caller holds dev->lock. */
void mox__cuda_completion_push(mox__cuda_dev *dev, mox__cuda_group *g);

#endif
