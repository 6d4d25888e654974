/* cuda_hints.c - what moxc tells a CUDA programmer whose spelling the
 * dialect does not have: the dialect's equivalent of CUDA's built-in
 * variables, qualifiers, types and functions, appended to clang's "use of
 * undeclared identifier" / "unknown type name" errors and to moxc's
 * "unknown function" errors as one clause ("...; the dialect has
 * mox_barrier()"). docs/porting-cuda.md has the full table. */
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

typedef struct cuda_hint {
    const char *name;
    const char *text;
} cuda_hint;

#define HAS(x) "the dialect has " x

static const cuda_hint hints[] = {
    /* built-in variables */
    {"threadIdx", HAS("mox_thread_idx() (a mox_dim3)")},
    {"blockIdx", HAS("mox_block_idx() (a mox_dim3)")},
    {"blockDim", HAS("mox_block_dim() (a mox_dim3)")},
    {"gridDim", HAS("mox_grid_dim() (a mox_dim3)")},
    {"warpSize", HAS("mox_warp_size() and MOX_WARP_SIZE")},
    /* qualifiers and markers */
    {"__global__", "mark kernels with MOX_KERNEL (and MOX_BLOCK(x, y, z) for a fixed block shape)"},
    {"__device__", "helpers in kernel sources need no marker (moxc adds __device__); in headers write MOX_DEVICE"},
    {"__host__", "helpers in kernel sources need no marker; in headers write MOX_DEVICE"},
    {"__forceinline__", "write static inline"},
    {"__noinline__", "write a plain static function"},
    {"__launch_bounds__", HAS("MOX_BLOCK(x, y, z), which fixes the block shape")},
    {"__shared__", HAS("MOX_SHARED(type, name, count) for block-shared memory")},
    {"__constant__", HAS("the kernel parameter MOX_TABLE(type, name, count) for a read-only table the host sets "
                         "at launch; a table known at compile time is a const file-scope array")},
    {"__managed__", "kernels reach memory only through their buffer parameters"},
    {"__grid_constant__", "value parameters are already constant for the whole launch"},
    {"template", "kernel sources are C: write one function per type (a macro can stamp them out)"},
    /* types */
    {"float2", HAS("mox_float2")}, {"float3", HAS("mox_float3")}, {"float4", HAS("mox_float4")},
    {"int2", HAS("mox_int2")},     {"int3", HAS("mox_int3")},     {"int4", HAS("mox_int4")},
    {"uint2", HAS("mox_uint2")},   {"uint3", HAS("mox_uint3")},   {"uint4", HAS("mox_uint4")},
    {"dim3", HAS("mox_dim3")},
    {"half", HAS("mox_f16 (convert with mox_f16_to_f32 / mox_f16_from_f32)")},
    {"__half", HAS("mox_f16 (convert with mox_f16_to_f32 / mox_f16_from_f32)")},
    {"half2", HAS("mox_half2")},   {"__half2", HAS("mox_half2")},
    {"make_float2", HAS("mox_make_float2")}, {"make_float3", HAS("mox_make_float3")},
    {"make_float4", HAS("mox_make_float4")}, {"make_int2", HAS("mox_make_int2")},
    {"make_int3", HAS("mox_make_int3")},     {"make_int4", HAS("mox_make_int4")},
    {"make_uint2", HAS("mox_make_uint2")},   {"make_uint3", HAS("mox_make_uint3")},
    {"make_uint4", HAS("mox_make_uint4")},
    /* synchronisation */
    {"__syncthreads", HAS("mox_barrier()")},
    {"__syncwarp", "the dialect's warp operations (mox_warp_*) synchronise their lanes themselves; mox_barrier() "
                   "orders memory in the block"},
    {"__threadfence", "nothing orders memory between the blocks of one dispatch; split the work into two launches"},
    {"__threadfence_block", HAS("mox_barrier()")},
    /* atomics */
    {"atomicAdd", HAS("mox_atomic_add_u32 / mox_atomic_add_i32 on mox_atomic_u32 / mox_atomic_i32 elements; "
                      "for float, a mox_atomic_cas_u32 loop on the bits (mox_f32_to_bits) in a buffer of u32")},
    {"atomicSub", HAS("mox_atomic_sub_u32 / mox_atomic_sub_i32")},
    {"atomicExch", HAS("mox_atomic_exchange_u32 / mox_atomic_exchange_i32")},
    {"atomicMin", HAS("mox_atomic_min_u32 / mox_atomic_min_i32")},
    {"atomicMax", HAS("mox_atomic_max_u32 / mox_atomic_max_i32")},
    {"atomicAnd", HAS("mox_atomic_and_u32 / mox_atomic_and_i32")},
    {"atomicOr", HAS("mox_atomic_or_u32 / mox_atomic_or_i32")},
    {"atomicXor", HAS("mox_atomic_xor_u32 / mox_atomic_xor_i32")},
    {"atomicCAS", HAS("mox_atomic_cas_u32 / mox_atomic_cas_i32")},
    {"atomicInc", "build it from mox_atomic_cas_u32"},
    /* warp operations */
    {"__shfl_sync", HAS("mox_warp_shuffle_f32 / _u32 / _i32")},
    {"__shfl_up_sync", HAS("mox_warp_shuffle_up_f32 / _u32 / _i32")},
    {"__shfl_down_sync", HAS("mox_warp_shuffle_down_f32 / _u32 / _i32")},
    {"__shfl_xor_sync", HAS("mox_warp_shuffle_xor_f32 / _u32 / _i32")},
    {"__ballot_sync", HAS("mox_warp_ballot")},
    {"__any_sync", HAS("mox_warp_any")},
    {"__all_sync", HAS("mox_warp_all")},
    {"__reduce_add_sync", HAS("mox_warp_sum_u32 / mox_warp_sum_i32")},
    {"__reduce_min_sync", HAS("mox_warp_min_u32 / mox_warp_min_i32")},
    {"__reduce_max_sync", HAS("mox_warp_max_u32 / mox_warp_max_i32")},
    {"__activemask", "warp operations work over the warp's active lanes already"},
    {"__lane_id", HAS("mox_lane_id()")},
    /* fast math */
    {"rsqrtf", HAS("mox_rsqrtf")},
    {"__expf", HAS("mox_fast_expf")},
    {"__logf", HAS("mox_fast_logf")},
    {"__log2f", HAS("mox_fast_log2f")},
    {"__log10f", HAS("mox_fast_log10f")},
    {"__sinf", HAS("mox_fast_sinf")},
    {"__cosf", HAS("mox_fast_cosf")},
    {"__tanf", HAS("mox_fast_tanf")},
    {"__powf", HAS("mox_fast_powf")},
    {"__fdividef", HAS("mox_fast_divf")},
    {"__frsqrt_rn", "write 1.0f / sqrtf(x) (correctly rounded division and square root)"},
    {"__fsqrt_rn", "write sqrtf (correctly rounded)"},
    {"__fdiv_rn", "write '/' (IEEE division)"},
    {"__fadd_rn", "write '+' (no contraction: every operation rounds)"},
    {"__fmul_rn", "write '*' (no contraction: every operation rounds)"},
    {"__fmaf_rn", "write fmaf"},
    {"__saturatef", "write fminf(fmaxf(x, 0.0f), 1.0f)"},
    {"__float_as_uint", HAS("mox_f32_to_bits")}, {"__float_as_int", HAS("mox_f32_to_bits")},
    {"__uint_as_float", HAS("mox_f32_from_bits")}, {"__int_as_float", HAS("mox_f32_from_bits")},
    {"__float2half", HAS("mox_f16_from_f32")}, {"__float2half_rn", HAS("mox_f16_from_f32")},
    {"__half2float", HAS("mox_f16_to_f32")},
    /* integer intrinsics */
    {"__popc", HAS("mox_popc_u32")},
    {"__clz", HAS("mox_clz_u32")},
    {"__ffs", HAS("mox_ffs_u32")},
    {"__brev", HAS("mox_brev_u32")},
    {"__umul24", HAS("mox_mul24_u32")},
    {"__mul24", HAS("mox_mul24_i32")},
    {"__umulhi", HAS("mox_mulhi_u32")},
    {"__mulhi", HAS("mox_mulhi_i32")},
    {"min", HAS("mox_min_i32 / mox_min_u32 (fminf for floats)")},
    {"max", HAS("mox_max_i32 / mox_max_u32 (fmaxf for floats)")},
    {"umin", HAS("mox_min_u32")},
    {"umax", HAS("mox_max_u32")},
    {"abs", "write (x < 0 ? -x : x) for integers, fabsf for floats"},
    /* double precision */
    {"sqrt", HAS("sqrtf (kernels are single precision)")},
    {"exp", HAS("expf (kernels are single precision)")},
    {"log", HAS("logf (kernels are single precision)")},
    {"sin", HAS("sinf (kernels are single precision)")},
    {"cos", HAS("cosf (kernels are single precision)")},
    {"pow", HAS("powf (kernels are single precision)")},
    {"fabs", HAS("fabsf (kernels are single precision)")},
    {"floor", HAS("floorf (kernels are single precision)")},
    {"ceil", HAS("ceilf (kernels are single precision)")},
    {"fmin", HAS("fminf (kernels are single precision)")},
    {"fmax", HAS("fmaxf (kernels are single precision)")},
    /* the C library */
    {"printf", "kernels cannot print; write what you need to a buffer"},
    {"malloc", "kernels cannot allocate; pass buffers, or use MOX_SHARED"},
    {"free", "kernels cannot allocate; pass buffers, or use MOX_SHARED"},
    {"memcpy", "copy element by element (records copy with '=')"},
    {"memset", "store element by element"},
    {"assert", HAS("mox_fail(code), which fails the dispatch with that code")},
    {"__trap", HAS("mox_fail(code), which fails the dispatch with that code")},
    {"clock", "kernels have no clocks; time launches on the host"},
    {"clock64", "kernels have no clocks; time launches on the host"},
    {"__ldg", "read buffers (const T *) are read-only already"},
};

const char *moxc__cuda_hint(const char *name) {
    for (size_t i = 0; name && i < sizeof hints / sizeof hints[0]; i++)
        if (strcmp(name, hints[i].name) == 0)
            return hints[i].text;
    return NULL;
}

/* The name between the first pair of single quotes of `msg` after
 * `prefix`, when msg starts with prefix; malloc'd. */
static char *quoted_after(const char *msg, const char *prefix) {
    if (!moxc__starts_with(msg, prefix))
        return NULL;
    const char *open = msg + strlen(prefix);
    const char *close = strchr(open, '\'');
    if (!close)
        return NULL;
    char *name = malloc((size_t)(close - open) + 1);
    if (name) {
        memcpy(name, open, (size_t)(close - open));
        name[close - open] = '\0';
    }
    return name;
}

char *moxc__clang_message(const char *msg, bool after_extern, bool *error) {
    static const char *const undeclared_function[] = {
        "implicit declaration of function '",     /* clang 14 */
        "call to undeclared function '",          /* clang 16+ */
        "implicitly declaring library function '",
        "call to undeclared library function '",
    };
    for (size_t i = 0; i < sizeof undeclared_function / sizeof undeclared_function[0]; i++) {
        char *name = quoted_after(msg, undeclared_function[i]);
        if (name) {
            const char *hint = moxc__cuda_hint(name);
            char *text = hint ? moxc__printf("unknown function '%s' in a kernel; %s", name, hint)
                              : moxc__printf("unknown function '%s' in a kernel (no declaration is visible)", name);
            free(name);
            *error = true;
            return text;
        }
    }
    /* C only warns about these conversions; nvcc's C++ refuses them, so a
     * source that builds without nvcc would fail with it */
    static const char *const cxx_conversion[] = {"incompatible pointer types ",
                                                 "incompatible integer to pointer conversion ",
                                                 "incompatible pointer to integer conversion "};
    bool conversion = strstr(msg, " discards qualifiers") != NULL;
    for (size_t i = 0; i < sizeof cxx_conversion / sizeof cxx_conversion[0]; i++)
        conversion |= moxc__starts_with(msg, cxx_conversion[i]);
    if (conversion) {
        *error = true;
        return moxc__printf("%s; the CUDA translation unit (C++) refuses this conversion, C only warns: "
                            "fix the types (an atomic on a MOX_SHARED array needs the array declared "
                            "of mox_atomic_u32 or mox_atomic_i32)",
                            msg);
    }
    /* half precision clang 14 cannot take by value on this target */
    if (moxc__starts_with(msg, "_Float16 is not supported on this target") ||
        moxc__starts_with(msg, "parameters cannot have __fp16 type"))
        return moxc__printf("%s; use mox_f16 for half precision", msg);
    static const char *const unknown_name[] = {"use of undeclared identifier '", "unknown type name '"};
    for (size_t i = 0; i < sizeof unknown_name / sizeof unknown_name[0]; i++) {
        char *name = quoted_after(msg, unknown_name[i]);
        if (!name)
            continue;
        const char *hint = strcmp(name, "__shared__") == 0 && after_extern
                               ? HAS("MOX_SHARED_DYNAMIC(type, name) for shared memory sized at launch "
                                     "(mox_launch_config.shared_bytes)")
                               : moxc__cuda_hint(name);
        free(name);
        if (hint)
            return moxc__printf("%s; %s", msg, hint);
        return NULL;
    }
    return NULL;
}

bool moxc__is_cuda_type_name(const char *name) {
    static const char *const vectors[] = {"char", "uchar", "short", "ushort", "int", "uint", "long",
                                          "ulong", "longlong", "ulonglong", "float", "double"};
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        size_t n = strlen(vectors[i]);
        if (strncmp(name, vectors[i], n) == 0 && name[n] >= '1' && name[n] <= '4' && name[n + 1] == '\0')
            return true;
    }
    static const char *const others[] = {"dim3", "half", "half2", "__half", "__half2", "__half_raw",
                                         "__half2_raw", "nv_bfloat16", "nv_bfloat162", "__nv_bfloat16",
                                         "__nv_bfloat162"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (strcmp(name, others[i]) == 0)
            return true;
    return false;
}
