/* src/cuda/cuda_state.h - loaded kernels and modules, and the backend's state of a submission (sub->be) and of a dispatch (d->be). Part of
 * cuda/cuda_internal.h, which includes the backend's headers in order:
 * include that one. */
#ifndef MOX_CUDA_STATE_H
#define MOX_CUDA_STATE_H

#ifndef MOX_CUDA_INTERNAL_H
#error "include cuda/cuda_internal.h, not cuda/cuda_state.h"
#endif

/* ---- kernels (cuda_module.c) ---- */

typedef struct mox__cuda_kernel {
    CUfunction fn;
    CUfunction fn_noalias;  /* mox_entry_<kernel>__noalias, or NULL (no read buffers, older artifact) */
    /* The same two without the gate check (MOX_ENTRY_UNGATED_SUFFIX), or
     * NULL: older artifact, or MOX_CUDA_PDL on and a module whose entries
     * without the check lack the grid wait (its marker reads 1). */
    CUfunction fn_ungated, fn_ungated_noalias;
    /* The two checking one inline dependency only (MOX_ENTRY_ONE_DEP_SUFFIX),
     * or NULL: older artifact, deferred gate check, or MOX_CUDA_PDL on and
     * a module whose marker does not say every entry waits. */
    CUfunction fn_gate1, fn_gate1_noalias;
    char name[96];
    uint32_t max_threads;   /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
    uint32_t static_shared; /* bytes */
    uint32_t max_dynamic_shared; /* bytes a launch may ask (MOX_KFEAT_DYNAMIC_SHARED kernels) */
    uint32_t param_count;
    uint32_t param_size[MOX_MAX_PARAMS]; /* bytes each parameter occupies */
    /* Every parameter 4 or 8 bytes (buffers, built-in scalars): an
     * instance keeps each of a node's last arguments in 8 bytes, compared
     * as one word (cuda_plan_internal.h); `wide`: bit p, parameter p has 8. */
    bool word_params;
    uint32_t wide_params;
    /* The entry a dispatch runs when its gate has no dependency, by
     * whether it asks for the no-alias one: mox__cuda_entry_fn(k, d, 0),
     * set once the module's entries are loaded (cuda_replay.c reads it). */
    CUfunction entry_plain[2];
    bool grid_wait;         /* its entries start with griddepcontrol.wait (module marker) */
} mox__cuda_kernel;

typedef struct mox__cuda_module {
    mox__cuda_dev *dev;
    CUmodule module;
    uint32_t kernel_count;
    mox__cuda_kernel *kernels;
} mox__cuda_module;

/* Loads verified fatbin bytes and looks up mox_entry_<kernel> for every
 * kernel of `abi`, checking each against the device (required block vs the
 * function's thread limit, static shared memory vs the device's). */
mox_status mox__cuda_module_load(mox__cuda_dev *dev, const void *image, size_t size,
                                 const mox_abi *abi, mox__cuda_module **out);
void mox__cuda_module_unload(mox__cuda_module *module);

/* The entry a dispatch of kernel k runs: the no-alias one where
 * mox__dispatch.entry asks for it and it exists; where the launch's gate
 * has no dependency (no failure can reach it) the one of those without the
 * gate check, and where it has exactly one (inline: make_gate) the one
 * checking one dependency, where those exist. */
static inline CUfunction mox__cuda_entry_of(const mox__cuda_kernel *k, uint32_t entry, uint32_t deps)
{
    bool noalias = entry == MOX__ENTRY_NOALIAS && k->fn_noalias;
    CUfunction special = deps == 0   ? (noalias ? k->fn_ungated_noalias : k->fn_ungated)
                         : deps == 1 ? (noalias ? k->fn_gate1_noalias : k->fn_gate1)
                                     : NULL;
    return special ? special : noalias ? k->fn_noalias : k->fn;
}

static inline CUfunction mox__cuda_entry_fn(const mox__cuda_kernel *k, const mox__dispatch *d, uint32_t deps)
{
    return mox__cuda_entry_of(k, d->entry, deps);
}

/* ---- per-submission state: lives in sub->be ---- */

typedef struct mox__cuda_sub {
    mox__submission *pub;
    struct mox__cuda_sub *next_exec; /* the launcher's queue of executions */
    mox__cuda_group *group;   /* its launch; NULL while pending and once done */
    uint32_t offset;          /* index of its first dispatch within the group */
    uint32_t stream;
    bool done;                /* completed (dispatch states are final) */
    struct mox__cuda_sub *next_pending;
    /* A point of another device that cannot be waited for on the device
     * yet (another backend's, or not launched): held, with the device's
     * later work, until host waiters see it reached (cuda_foreign.c). */
    bool blocked;
    uint32_t fwaits_left;
    mox__cuda_dev *dev;
    mox__sem_waiter *fwaiters;
    mox__sem_waiter fwaiters_inline[2];
    /* Waiting in its stream's pending list. Written by the launcher under
     * dev->lock; mox__cuda_flush reads it with no lock (cuda_submit.c says
     * why that cannot miss a flush). Last: mox__cuda_submit's memset stops
     * before it. */
    _Atomic bool pending;
} mox__cuda_sub;

static inline mox__cuda_sub *mox__cuda_sub_of(const mox__submission *pub)
{
    return (mox__cuda_sub *)pub->be;
}

/* ---- per-dispatch state: lives in d->be ---- */

/* may_fail: whether a dispatch can end anything but OK: its kernel can
 * call mox_fail, or it is gated on one that can. Only such dispatches are
 * gate dependencies of others, so a batch of kernels that never fail runs
 * with no gate reads at all (each read costs every warp of the grid a
 * dependent load before it starts: ~9% of a 2^28-element streaming
 * kernel).
 * carry_first, carry_count: for a kernel with MOX_KFEAT_GATE_DEFERRED, the
 * status slots its gate reads, kept in its launch's group (carried[]) for
 * the gates of its readers (cuda_gates.c); written when its node is
 * described, read while it has not finished. */
typedef struct mox__cuda_dstate {
    uint32_t may_fail;
    uint32_t carry_first, carry_count;
} mox__cuda_dstate;

/* A status slot a deferred dispatch's gate reads (cuda_gates.c): `intra`,
 * an index in its own launch; else an absolute slot of `inst`, an earlier
 * launch's instance its launch holds a reader count on, or (`inst` NULL)
 * the FAILED sentinel. */
typedef struct mox__cuda_carried {
    mox__cuda_inst *inst;
    uint32_t slot;
    bool intra;
} mox__cuda_carried;

static inline bool mox__cuda_may_fail(const mox__dispatch *d)
{
    return d->be && ((const mox__cuda_dstate *)d->be)->may_fail;
}

#endif
