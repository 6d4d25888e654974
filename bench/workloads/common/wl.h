/* wl.h - the real workloads (bench/workloads: ports of public CUDA samples,
 * and the examples) as the tests and the benchmark drive them.
 *
 * A workload instance owns numbered slots: device memory with a type, a
 * length and initial contents. One run of the workload is a plan: launches
 * over those slots, in order. The same plan runs through mox (wl_mox.c:
 * one sequence per run, or one op per launch) and, on CUDA, on one raw
 * stream (bench/runner_workloads_raw.c); a port also carries the plan of
 * the unchanged original kernels, which may use the original module's own
 * variables (__constant__, __device__) as slots. Runs reuse the slots back
 * to back and some write in place, as real programs do; a check starts
 * from the initial contents (a reset) and compares one run's outputs with
 * the sample's own CPU code (the workload's verify). */
#ifndef MOX_WORKLOADS_WL_H
#define MOX_WORKLOADS_WL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mox/mox.h>

#define WL_MAX_SLOTS 16
#define WL_MAX_ARGS 16
#define WL_VALUE_BYTES 64

/* Test sizes (CPU backend in CI, seconds at most) or benchmark sizes
 * (kernels of 5-500 us on an H200). */
typedef enum wl_scale { WL_TINY, WL_FULL } wl_scale;

typedef struct wl_slot {
    const char *name;     /* for messages */
    const mox_type *type; /* element type */
    size_t length;        /* elements */
    const void *init;     /* initial contents (owned by the workload), or NULL: poison (0xff bytes) */
    const char *symbol;   /* non-NULL: a variable of the original module, not a buffer */
} wl_slot;

typedef enum wl_arg_kind { WL_ARG_BUFFER, WL_ARG_VALUE } wl_arg_kind;

typedef struct wl_arg {
    wl_arg_kind kind;
    mox_access access;    /* buffers */
    uint32_t slot;        /* buffers */
    size_t offset;        /* buffers: elements from the slot's start (original kernels only) */
    const mox_type *type; /* values (a table: its whole array type) */
    uint32_t size;        /* values: bytes */
    const void *data;     /* tables: the array (owned by the workload), else NULL: `value` */
    _Alignas(16) unsigned char value[WL_VALUE_BYTES];
} wl_arg;

typedef struct wl_launch {
    uint32_t kernel;       /* index into the plan's kernel names */
    mox_launch_config cfg; /* with the dynamic shared memory (shared_bytes) */
    uint32_t arg_count;
    wl_arg args[WL_MAX_ARGS];
} wl_launch;

typedef struct wl_plan {
    const char *const *kernels; /* port: the module's kernel names; original: the CUDA symbols */
    uint32_t kernel_count;      /* 0: no such plan */
    wl_launch *launches;
    size_t count, cap;
    uint32_t outputs[WL_MAX_SLOTS]; /* the slots verify receives, in this order */
    uint32_t output_count;
} wl_plan;

struct wl_workload;

typedef struct wl_instance {
    const struct wl_workload *workload;
    char params[96];     /* sizes, e.g. "options=4000000" */
    double bytes, flops; /* one run's fewest bytes moved / flops (0: not counted) */
    wl_slot slots[WL_MAX_SLOTS];
    uint32_t slot_count;
    wl_plan port;       /* one run through the mox kernels */
    wl_plan orig;       /* one run through the original kernels (kernel_count 0: none) */
    bool deterministic; /* the same inputs give the same bits on one device */
    size_t probe;       /* an element of the first output the check covers (0: the middle) */
    void *state;        /* the workload's own: inputs, gold results */
} wl_instance;

typedef struct wl_workload {
    const char *name;              /* "blackscholes" */
    const char *sample;            /* cuda-samples folder, "BlackScholes"; NULL for an example */
    const mox_module_desc *module; /* the port's generated module */
    const char *orig_fatbin;       /* stem of the original's fatbins ("BlackScholes"), NULL: none */
    /* Fills a zeroed instance: slots, plans, gold results. false with err. */
    bool (*create)(wl_instance *in, wl_scale scale, char *err, size_t err_len);
    /* One run's outputs (host copies of plan->outputs, in order) against
     * the gold results. Writes what it compared and how close it came into
     * `why` (pass or fail). `orig`: produced by the original kernels. */
    bool (*verify)(const wl_instance *in, bool orig, const void *const *outputs, char *why, size_t why_len);
    void (*destroy)(wl_instance *in);
} wl_workload;

/* ---- building instances (wl_plan.c) ---- */

/* A new slot; returns its index (aborts past WL_MAX_SLOTS: a workload bug). */
uint32_t wl_slot_add(wl_instance *in, const char *name, const mox_type *type, size_t length,
                     const void *init);
/* A variable of the original module used as a slot (bytes of u8). */
uint32_t wl_symbol_add(wl_instance *in, const char *symbol, size_t bytes, const void *init);
/* The index of kernel `name` in the port's module; false with err if absent. */
bool wl_kernel(const wl_instance *in, const char *name, uint32_t *index, char *err, size_t err_len);
void wl_plan_init(wl_plan *p, const char *const *kernels, uint32_t kernel_count);
/* Appends a launch; NULL when out of memory. */
wl_launch *wl_plan_add(wl_plan *p, uint32_t kernel, mox_launch_config cfg);
void wl_plan_output(wl_plan *p, uint32_t slot);
void wl_arg_buffer(wl_launch *l, mox_access access, uint32_t slot, size_t offset);
void wl_arg_value(wl_launch *l, const mox_type *type, const void *value);
/* A MOX_TABLE argument: `type` is the table's array type (signature
 * "[<element signature>;<count>]", size count * element size), `data` the
 * count elements, kept alive by the workload. */
void wl_arg_table(wl_launch *l, const mox_type *type, const void *data);
/* Fills *out as the array type of `count` elements of `element`, its text
 * in sig[sig_len] (which must outlive *out). */
void wl_table_type(mox_type *out, const mox_type *element, uint32_t count, char *sig, size_t sig_len);
void wl_arg_u32(wl_launch *l, uint32_t v);
void wl_arg_i32(wl_launch *l, int32_t v);
void wl_arg_f32(wl_launch *l, float v);
/* Several arguments at once, one letter each, in the kernel's order:
 * R, W, A a whole buffer slot (uint32_t) read, written, atomic; u, i, f a
 * uint32_t, int32_t, float (passed as double) value. wl_args(l, "RRWu",
 * a, b, out, n) appends what four single calls would. */
void wl_args(wl_launch *l, const char *spec, ...);
/* grid x block, both 2-D. */
mox_launch_config wl_cfg(uint32_t gx, uint32_t gy, uint32_t bx, uint32_t by);
/* Frees the plans and calls the workload's destroy. */
void wl_instance_free(wl_instance *in);
/* The size of slot s in bytes. */
size_t wl_slot_bytes(const wl_instance *in, uint32_t s);
/* Frees host copies of outputs and sets them NULL. */
void wl_outputs_free(void **outputs, uint32_t count);

/* ---- checks (wl_check.c): each writes a description into why ---- */

/* Formats the message into err and returns false. */
bool wl_fail(char *err, size_t err_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Bit for bit; `elem` bytes per element. */
bool wl_check_bits(const void *got, const void *want, size_t n, size_t elem, const char *what, char *why,
                   size_t why_len);
/* L1 norm sum|got-want| / sum|want| at most `limit`; also reports the
 * largest absolute difference. */
bool wl_check_l1(const float *got, const float *want, size_t n, double limit, const char *what, char *why,
                 size_t why_len);
/* |got - want| at most `limit` everywhere. */
bool wl_check_abs(const float *got, const float *want, size_t n, double limit, const char *what, char *why,
                  size_t why_len);

/* ---- the workloads (wl_registry.c) ---- */

extern const wl_workload *const wl_ports[];
extern const size_t wl_port_count;
const wl_workload *wl_port_find(const char *name);

#endif
