/* runner_workloads_examples.h - what the example workloads share
 * (runner_workloads_examples.c: module benchq; runner_workloads_more.c:
 * module benchwl): their state (host inputs and the gold output), its
 * check, and the plan pieces they have in common. */
#ifndef MOX_BENCH_RUNNER_WORKLOADS_EXAMPLES_H
#define MOX_BENCH_RUNNER_WORKLOADS_EXAMPLES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner_work.h"
#include "runner_workloads.h"

#define EX_MAX_HOST 4
#define EX_SCAN_LEVELS 8

typedef struct ex_state {
    void *host[EX_MAX_HOST]; /* inputs and the gold output, freed with the state */
    const void *gold;
    size_t n;               /* elements of the output compared (4 bytes each) */
    bool particles;         /* compare Particle fields (padding is not data) */
    const void *count_gold; /* compaction: the expected count (second output), or NULL */
} ex_state;

/* A zeroed state with `count` zeroed host arrays of the given byte sizes;
 * the port plan's kernels are module's. NULL with err. */
ex_state *ex_new(wl_instance *in, const mox_module_desc *module, const size_t *bytes, int count, char *err,
                 size_t err_len);
void ex_destroy(wl_instance *in);
/* The first n elements of the first output against gold, bit for bit. */
void ex_gold(ex_state *s, const void *gold, size_t n);
bool ex_verify(const wl_instance *in, bool orig, const void *const *outputs, char *why, size_t why_len);
/* A launch of the module's kernel `kernel`; NULL with err. */
wl_launch *ex_launch(wl_instance *in, const char *kernel, mox_launch_config cfg, char *err, size_t err_len);
/* ceil(n / block) blocks of block threads. */
mox_launch_config ex_cfg(size_t n, uint32_t block);
/* The multi-level exclusive scan of examples/cooperation over slot `input`
 * (n u32): level 0 into a new slot (*prefix0), one total per block; each
 * level above scans the totals below until one block is left;
 * add_offsets adds them back down. */
bool ex_plan_scan(wl_instance *in, uint32_t input, size_t n, uint32_t *prefix0, uint32_t *level_count,
                  char *err, size_t err_len);

#define EXAMPLE(id, label, mod, fn)                                                                          \
    const wl_workload id = {                                                                                 \
        .name = label, .module = &mod, .create = fn, .verify = ex_verify, .destroy = ex_destroy}

/* runner_workloads_more.c */
extern const wl_workload ex_pipeline, ex_compaction, ex_dot;

#endif
