/* runner_gpu.h - the kernel-quality suite's CUDA side: a context on the
 * driver API (the runtime's own symbol table, src/cuda/cuda_api.h), the
 * moxc-generated module (verified fatbin of module "benchq") and the
 * hand-written references (one fatbin per file of bench/kernels_ref), and workloads
 * whose runs are timed with events and verified against CPU results. */
#ifndef MOX_BENCH_RUNNER_GPU_H
#define MOX_BENCH_RUNNER_GPU_H

#include <stdbool.h>

#include <mox/module.h>

#include "cuda/cuda_api.h"
#include "manifest.h"
#include "runner.h"

/* How a kernel is launched. The generated entries take a mox_gate first:
 * GPU_GEN passes a NULL status (no gating, as for a single launch outside
 * a batch), GPU_GATED a status array and one dependency, the cost every
 * dispatch of a runtime batch pays. */
enum { GPU_REF, GPU_GEN, GPU_GATED, GPU_VARIANTS };
extern const char *const gpu_variant_names[GPU_VARIANTS];

#define GPU_MAX_REF_MODULES 8
#define GPU_MAX_SETS 3

typedef struct gpu_ctx {
    const mox__cuda_api *cu;
    CUdevice device;
    CUcontext ctx;
    CUmodule gen;
    CUmodule ref[GPU_MAX_REF_MODULES];
    size_t ref_count;
    CUevent start, stop;
    CUfunction spin;         /* ref_spin: queues the timed launches behind it */
    CUdeviceptr gate_status; /* all-OK status words for GPU_GATED */
    bool dead;               /* a sticky fault: nothing more can run */
    char err[1024];
    bench_report *report;
} gpu_ctx;

typedef struct gpu_kernel {
    /* [0] ref_<name>; [1] mox_entry_<name>__ungated (mox_entry_<name> in
     * artifacts built before it existed), the entry mox runs for a launch
     * no failure can reach; [2] mox_entry_<name>, the gated one */
    CUfunction fn[3];
    int regs[2], local_bytes[2];
} gpu_kernel;

/* A workload: runs (one launch sequence over one input set) timed with
 * events. reset runs before the timed region, verify after it (and puts
 * the poison back into the outputs). */
typedef struct gpu_workload {
    const char *name;
    char params[96];
    double bytes, flops;
    uint32_t sets;
    char note[192];
    void *state;
    bool (*reset)(gpu_ctx *g, void *state, uint32_t set);
    bool (*launch)(gpu_ctx *g, void *state, int variant, uint32_t set);
    bool (*verify)(gpu_ctx *g, void *state, uint32_t set, char *why, size_t why_len);
    void (*destroy)(gpu_ctx *g, void *state);
} gpu_workload;

typedef bool (*gpu_workload_make)(gpu_ctx *g, bool smoke, gpu_workload *out);

/* ---- runner_gpu_artifacts.c ---- */

/* The verified fatbin of a module's artifact (found as the runtime finds
 * it; ABI hash checked) in *fatbin (free() it), its directory in dir, its
 * manifest in *man_out when non-NULL (mox_manifest_free it). false with err. */
bool bench_artifact_fatbin(const mox_module_desc *m, void **fatbin, size_t *size, mox_manifest **man_out,
                           char *dir, size_t dir_len, char *err, size_t err_len);
/* A whole file in *data (free() it); false when unreadable or empty. */
bool bench_read_file(const char *path, void **data, size_t *size);
/* The hand-written references' fatbins: $MOX_BENCH_REF_DIR or the build's. */
const char *bench_ref_dir(void);
/* The generated module (benchq's artifact; its nvcc flags and version and
 * its directory go to the report's build facts) into g->gen, and every
 * reference fatbin into g->ref. Each returns false with g->err set. */
bool gpu_load_generated(gpu_ctx *g);
bool gpu_load_references(gpu_ctx *g);

/* ---- runner_gpu_calls.c ---- */

/* Each returns false with g->err set. */
bool gpu_check(gpu_ctx *g, CUresult result, const char *what);
bool gpu_kernel_find(gpu_ctx *g, const char *name, gpu_kernel *out);
bool gpu_launch(gpu_ctx *g, const gpu_kernel *k, int variant, uint32_t self, unsigned gx,
                unsigned gy, unsigned bx, unsigned by, void **params, size_t count);
bool gpu_alloc(gpu_ctx *g, CUdeviceptr *out, size_t bytes);
void gpu_free(gpu_ctx *g, CUdeviceptr *p);
bool gpu_upload(gpu_ctx *g, CUdeviceptr dst, const void *src, size_t bytes);
bool gpu_download(gpu_ctx *g, void *dst, CUdeviceptr src, size_t bytes);
/* Fills `bytes` (a multiple of 4) with the 32-bit pattern, on the stream. */
bool gpu_fill32(gpu_ctx *g, CUdeviceptr dst, uint32_t pattern, size_t bytes);

/* The poison written into outputs before every run: a NaN for floats, an
 * impossible count for integers. */
#define GPU_POISON 0xFFFFFFFFu

/* ---- runner_gpu_cases.c: the workloads ---- */

bool gpu_make_vec_add(gpu_ctx *g, bool smoke, gpu_workload *out);
bool gpu_make_reduce(gpu_ctx *g, bool smoke, gpu_workload *out);
bool gpu_make_histogram(gpu_ctx *g, bool smoke, gpu_workload *out);
bool gpu_make_scan(gpu_ctx *g, bool smoke, gpu_workload *out);
bool gpu_make_particles(gpu_ctx *g, bool smoke, gpu_workload *out);
bool gpu_make_matmul(gpu_ctx *g, bool smoke, gpu_workload *out);
bool gpu_make_matmul_f16(gpu_ctx *g, bool smoke, gpu_workload *out);

#endif
