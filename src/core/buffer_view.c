/* buffer_view.c - binding a buffer to a parameter of another element type
 * (docs/kernel-language.md, "Buffer views"): CUDA code reads a u32 array as
 * uint4s or a float array as float4s, and mox lets a launch do the same
 * with the same buffer, so every access is still tracked on that buffer.
 * A view is allowed between element types made of the same lanes (a
 * scalar and the vectors of it: u32, u32x2, u32x3, u32x4) and between any
 * type and bytes (u8, i8), when the buffer holds a whole number of the
 * parameter's elements at the parameter's alignment. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "buffer.h"
#include "module.h"

/* The lane type of a scalar or vector signature ("u32", "u32x4" -> "u32"),
 * written into lane; false for records and arrays. */
static bool lane_of(const char *sig, char lane[4])
{
    static const char *const scalars[] = {"f32", "f16", "u32", "i32", "u16", "i16", "u8", "i8"};
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        size_t n = strlen(scalars[i]);
        if (strncmp(sig, scalars[i], n) != 0)
            continue;
        const char *rest = sig + n;
        if (*rest == '\0' || (rest[0] == 'x' && rest[1] >= '2' && rest[1] <= '4' && rest[2] == '\0')) {
            memcpy(lane, scalars[i], n + 1);
            return true;
        }
    }
    return false;
}

static bool is_bytes(const char *sig)
{
    return strcmp(sig, "u8") == 0 || strcmp(sig, "i8") == 0;
}

bool mox__view_allowed(const mox_buffer *buffer, const mox__param_check *param, char *why, size_t size)
{
    const char *from = buffer->type->signature;
    char a[4], b[4];
    bool same_lanes = lane_of(from, a) && lane_of(param->signature, b) && strcmp(a, b) == 0;
    if (!same_lanes && !is_bytes(from) && !is_bytes(param->signature)) {
        snprintf(why, size, "a buffer binds to another element type only as a view of the same lanes "
                            "(u32 as u32x4, f32 as f32x4, ...) or of bytes (u8, i8)");
        return false;
    }
    if (param->size == 0 || buffer->bytes % param->size != 0) {
        snprintf(why, size, "a view needs a whole number of %s elements: the buffer has %llu bytes, not a "
                            "multiple of %u",
                 param->signature, (unsigned long long)buffer->bytes, param->size);
        return false;
    }
    if (param->align == 0 || (uintptr_t)buffer->address % param->align != 0) {
        snprintf(why, size, "a view of %s needs %u-byte alignment, and the buffer's address is not aligned so",
                 param->signature, param->align);
        return false;
    }
    return true;
}
