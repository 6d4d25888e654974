/* scan_plan.h - a multi-level exclusive prefix sum over a u32 buffer, built
 * from the block_scan and add_offsets kernels and recorded into a batch.
 *
 * Level 0 scans the input in blocks of 256 and writes one total per block;
 * level l+1 scans level l's totals the same way, until a level has a single
 * block (its prefix is then final). The down-sweep adds each level's scanned
 * totals to the level below as per-block offsets. Every pass goes into the
 * caller's batch, where the buffer accesses order them (A6). */
#ifndef COOPERATION_SCAN_PLAN_H
#define COOPERATION_SCAN_PLAN_H

#include <mox/mox.h>

#define SCAN_PLAN_MAX_LEVELS 8

typedef struct scan_level {
    mox_buffer *input;  /* the values this level scans (borrowed at level 0) */
    mox_buffer *prefix; /* their exclusive prefix (the caller's output at level 0) */
    mox_buffer *totals; /* one total per block */
    uint32_t n;         /* elements at this level */
} scan_level;

typedef struct scan_plan {
    mox_device *device;
    scan_level levels[SCAN_PLAN_MAX_LEVELS];
    uint32_t level_count;
} scan_plan;

/* Plans the scan of n elements of `input` into `prefix` (both u32 buffers
 * of at least n elements), allocating the per-level buffers. */
mox_status scan_plan_create(mox_device *device, mox_buffer *input, mox_buffer *prefix, uint32_t n,
                            scan_plan *out);
/* Pushes the up-sweep and down-sweep launches into `batch`. */
mox_status scan_plan_record(const scan_plan *plan, mox_batch *batch);
/* The buffer whose element 0 holds the grand total after the batch ran
 * (the top level's totals; empty when n is 0). Borrowed. */
mox_buffer *scan_plan_total(const scan_plan *plan);
/* Releases the buffers the plan allocated. */
void scan_plan_destroy(scan_plan *plan);

#endif
