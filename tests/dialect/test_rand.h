/* test_rand.h - a small deterministic generator for test inputs. */
#ifndef MOX_TEST_RAND_H
#define MOX_TEST_RAND_H

#include <stdint.h>
#include <string.h>

static inline uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint32_t rng_u32(uint64_t *s) { return (uint32_t)(rng_next(s) >> 32); }

/* Mostly ordinary floats of mixed magnitude and sign, sometimes a special
 * (zeros of both signs, infinities, NaNs, subnormals, extremes). */
static inline float rng_float(uint64_t *s) {
    static const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u, 0x7f800000u,
                                        0xff800000u, 0x7fc00000u, 0xffc00001u, 0x00000001u, 0x806fffffu,
                                        0x7f7fffffu, 0xff7fffffu, 0x3f800001u};
    uint32_t r = rng_u32(s);
    uint32_t bits;
    if ((r & 31u) == 0) {
        bits = specials[(r >> 5) % (sizeof specials / sizeof specials[0])];
    } else {
        uint32_t exp = 127u - 20u + (r >> 5) % 41u;
        bits = (rng_u32(s) & 0x807fffffu) | (exp << 23);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

#endif
