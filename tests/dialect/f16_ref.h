/* f16_ref.h - an exact binary16 reference independent of mox/kernel*.h:
 * values from ldexp, rounding by searching the nearest half (ties to the
 * even pattern); NaNs canonical as documented. Host C and C++. */
#ifndef MOX_TEST_F16_REF_H
#define MOX_TEST_F16_REF_H

#include <math.h>
#include <stdint.h>

#include "warp_ref.h"

/* Exact value of a non-NaN half (as a double: every half fits). */
static inline double half_value(uint32_t h) {
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    double v = e == 0 ? ldexp((double)m, -24) : e == 31 ? INFINITY : ldexp((double)(1024u + m), (int)e - 25);
    return (h & 0x8000u) ? -v : v;
}

static inline uint32_t ref_to_f32(uint32_t h) {
    if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)) return 0x7fffffffu;
    return ref_fbits((float)half_value(h));
}

static inline uint32_t ref_from_f32(uint32_t bits) {
    float f = ref_bitsf(bits);
    if (isnan(f)) return 0x7fffu;
    uint32_t sign = (bits >> 16) & 0x8000u;
    double x = fabs((double)f);
    if (x >= 65520.0) return sign | 0x7c00u;
    /* largest positive finite half <= x */
    uint32_t lo = 0, hi = 0x7bffu;
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1u) / 2u;
        if (half_value(mid) <= x) lo = mid;
        else hi = mid - 1u;
    }
    double below = half_value(lo), above = lo == 0x7bffu ? 65536.0 : half_value(lo + 1u);
    uint32_t h;
    if (x == below) h = lo;
    else if (x - below < above - x) h = lo;
    else if (x - below > above - x) h = lo + 1u;
    else h = (lo & 1u) ? lo + 1u : lo;
    return sign | h;
}

#endif
