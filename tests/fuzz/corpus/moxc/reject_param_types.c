/* param_types.c - one kernel per unsupported parameter type. */
#include <mox/kernel.h>
#include <stddef.h>
#include "records/bad_records.h"

typedef union {
    float f;
    uint32_t u;
} Bits;

enum mode { MODE_A, MODE_B };

MOX_KERNEL void k_char(const char *text /* EXPECT:char */) { (void)text; }
MOX_KERNEL void k_bool(bool flag /* EXPECT:bool */) { (void)flag; }
MOX_KERNEL void k_double(const double *x /* EXPECT:double */) { (void)x; }
MOX_KERNEL void k_long(long x /* EXPECT:long */) { (void)x; }
MOX_KERNEL void k_u64(uint64_t *x /* EXPECT:u64 */) { (void)x; }
MOX_KERNEL void k_size(size_t n /* EXPECT:size */) { (void)n; }
MOX_KERNEL void k_ptrptr(float **rows /* EXPECT:ptrptr */) { (void)rows; }
MOX_KERNEL void k_void(void *raw /* EXPECT:voidptr */) { (void)raw; }
MOX_KERNEL void k_fn(void (*callback)(float) /* EXPECT:fnptr */) { (void)callback; }
MOX_KERNEL void k_union(Bits bits /* EXPECT:union */) { (void)bits; }
MOX_KERNEL void k_enum(enum mode m /* EXPECT:enum */) { (void)m; }
MOX_KERNEL void k_array_ptr(float (*rows)[4] /* EXPECT:arrayptr */) { (void)rows; }
MOX_KERNEL void k_atomic_value(mox_atomic_u32 counter /* EXPECT:atomicvalue */) { (void)counter; }
MOX_KERNEL void k_const_atomic(const mox_atomic_u32 *counter /* EXPECT:constatomic */) { (void)counter; }
MOX_KERNEL void k_volatile(volatile float *x /* EXPECT:volatile */) { (void)x; }
