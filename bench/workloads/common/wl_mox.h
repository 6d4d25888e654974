/* wl_mox.h - a workload instance through the public mox API: one buffer per
 * slot the port's plan uses, and runs as one sequence each (single-shot or
 * back to back) or as one op per launch, ordered across batches by the
 * runtime (rule A6). */
#ifndef MOX_WORKLOADS_WL_MOX_H
#define MOX_WORKLOADS_WL_MOX_H

#include "wl.h"

typedef struct wl_mox {
    mox_device *dev;
    const wl_instance *in;
    mox_buffer *buffers[WL_MAX_SLOTS]; /* NULL for slots the port does not use */
    mox_arg *args;                     /* WL_MAX_ARGS per launch of in->port, built once */
} wl_mox;

/* Creates the buffers (with their initial contents) and the argument
 * arrays. false with err; wl_mox_close is safe either way. */
bool wl_mox_open(wl_mox *m, mox_device *dev, const wl_instance *in, char *err, size_t err_len);
void wl_mox_close(wl_mox *m);
/* Writes every slot's initial contents (poison where it has none). */
bool wl_mox_reset(const wl_mox *m, char *err, size_t err_len);
/* The lazy launch op of launch `index` of one run. */
mox_op *wl_mox_launch(const wl_mox *m, size_t index);
/* mox_record_fn: pushes one run's launches; ctx is a const wl_mox *. */
mox_status wl_mox_record(void *ctx, mox_batch *batch);
/* `runs` runs, each one sequence (separate = false) or one op per launch,
 * every op polled once as it is made (that submits it, capacity allowing),
 * then all waited in order. runs = 1 without separate is a single shot. */
bool wl_mox_runs(const wl_mox *m, uint32_t runs, bool separate, char *err, size_t err_len);
/* Host copies of the port plan's outputs (free each with free()). */
bool wl_mox_read(const wl_mox *m, void **outputs, char *err, size_t err_len);
/* Reads the outputs and runs the workload's verify on them. */
bool wl_mox_verify(const wl_mox *m, char *why, size_t why_len);
/* Resets, does `runs` runs the given way, reads the outputs: the state
 * after those runs (for comparing two ways of running the same runs). */
bool wl_mox_state_after(const wl_mox *m, uint32_t runs, bool separate, bool one_by_one, void **outputs,
                        char *err, size_t err_len);

#endif
