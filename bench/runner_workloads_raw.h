/* runner_workloads_raw.h - the workloads suite's raw-CUDA side: a workload
 * instance's plans launched with cuLaunchKernel on one stream of the
 * device's primary context (the context mox's CUDA backend uses too), with
 * the moxc-generated entries (the artifact's fatbin, gate off; the no-alias
 * entry where mox would run it) or the
 * unchanged original kernels (bench/workloads/<sample>/original, built
 * twice: moxc's numerics and nvcc's defaults). Runs are waited by spinning
 * on an event, the cheapest wait the driver offers. */
#ifndef MOX_BENCH_RUNNER_WORKLOADS_RAW_H
#define MOX_BENCH_RUNNER_WORKLOADS_RAW_H

#include "cuda/cuda_api.h"
#include "wl.h"

/* Which kernels a raw run launches. */
typedef enum raw_kind { RAW_GEN, RAW_ORIG, RAW_FAST, RAW_KINDS } raw_kind;
extern const char *const raw_kind_names[RAW_KINDS]; /* "raw-gen", "raw-orig", "raw-orig-fast" */

typedef struct raw_ctx {
    const mox__cuda_api *cu;
    CUdevice device;
    CUcontext ctx;
    CUstream stream;
    CUevent start, stop, done;
    CUmodule spin_module;
    CUfunction spin;
    /* cuModuleGetGlobal_v2, looked up in the driver the runtime loaded. */
    CUresult (*get_global)(CUdeviceptr *ptr, size_t *bytes, CUmodule module, const char *name);
    bool dead; /* a sticky fault: nothing more can run */
    char err[768];
} raw_ctx;

typedef struct raw_launch {
    CUfunction fn;
    mox_launch_config cfg;
    CUdeviceptr ptr[WL_MAX_ARGS];
    void *params[WL_MAX_ARGS + 1];
} raw_launch;

typedef struct raw_instance {
    raw_ctx *rc;
    const wl_instance *in;
    CUdeviceptr mem[WL_MAX_SLOTS];            /* buffer slots */
    CUmodule module[RAW_KINDS];               /* NULL: that kind is unavailable */
    CUdeviceptr sym[RAW_KINDS][WL_MAX_SLOTS]; /* symbol slots, per original module */
    raw_launch *launches[RAW_KINDS];
    size_t count[RAW_KINDS];
    char missing[RAW_KINDS][256]; /* why a kind is unavailable */
    CUgraph graph;                /* raw_graph_runs: one run of RAW_GEN, built on first use */
    CUgraphExec graph_exec;
} raw_instance;

/* The plan kind runs: the port's (generated kernels) or the original's. */
static inline const wl_plan *raw_plan_of(const raw_instance *ri, raw_kind kind)
{
    return kind == RAW_GEN ? &ri->in->port : &ri->in->orig;
}

/* The device address of a slot for kind: a module variable's (an
 * original's __constant__ or __device__ symbol) or the allocated buffer. */
static inline CUdeviceptr raw_slot_address(const raw_instance *ri, raw_kind kind, uint32_t slot)
{
    return ri->in->slots[slot].symbol ? ri->sym[kind][slot] : ri->mem[slot];
}

/* ---- runner_workloads_raw.c: the context and the instances ---- */

/* true for CUDA_SUCCESS; else records "<what>: <CUDA name>" in rc->err
 * (a sticky fault marks the context dead) and returns false. */
bool raw_check(raw_ctx *rc, CUresult r, const char *what);

/* Opens the driver, the primary context, a stream, events and the spin
 * kernel (ref_spin of the references' vec_add.fatbin). false with rc->err
 * (no driver, no device: the suite then runs mox alone). */
bool raw_open(raw_ctx *rc);
void raw_close(raw_ctx *rc);

/* Allocates the slots, loads what exists (the generated module's
 * fatbin, and for a port the original fatbins from orig_dir) and writes
 * the initial state for each loaded kind, as wl_mox_open does for mox. A
 * kind whose module cannot be loaded is left out with the reason in ri->missing.
 * false with rc->err when even the slots cannot be had. */
bool raw_instance_open(raw_ctx *rc, raw_instance *ri, const wl_instance *in, const void *gen_fatbin,
                       const char *orig_dir);
void raw_instance_close(raw_instance *ri);
bool raw_has(const raw_instance *ri, raw_kind kind);

/* ---- runner_workloads_raw_runs.c: runs on an instance ---- */

/* Writes the initial contents (poison where none) of the slots kind uses;
 * raw_instance_open does it for every kind it loads. */
bool raw_reset(raw_instance *ri, raw_kind kind);
/* Whether every slot with initial contents holds them (read back, byte
 * for byte); false with the first slot that does not in why. */
bool raw_holds_initial_state(raw_instance *ri, raw_kind kind, char *why, size_t why_len);
/* Enqueues `runs` runs, records an event and spins until it completes. */
bool raw_runs(raw_instance *ri, raw_kind kind, uint32_t runs);
/* Replays one run of the generated kernels as a CUDA graph (each launch
 * after the one before) `runs` times, then spins until done
 * (runner_workloads_rawgraph.c); raw_graph_close frees the graph. */
bool raw_graph_runs(raw_instance *ri, uint32_t runs);
void raw_graph_close(raw_instance *ri);
/* GPU time (events) of one run queued behind a spin kernel, in us. */
bool raw_kernel_time(raw_instance *ri, raw_kind kind, double *us);
/* Host copies of the outputs of kind's plan (free with wl_outputs_free). */
bool raw_read(raw_instance *ri, raw_kind kind, void **outputs);
/* Reset, one run, the workload's verify. */
bool raw_verify(raw_instance *ri, raw_kind kind, char *why, size_t why_len);

#endif
