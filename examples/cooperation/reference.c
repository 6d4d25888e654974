/* reference.c - sequential CPU versions of the cooperation kernels. */
#include "reference.h"

void histogram_reference(const uint32_t *values, size_t n, uint32_t bins[HISTOGRAM_BINS])
{
    for (unsigned b = 0; b < HISTOGRAM_BINS; b++)
        bins[b] = 0;
    for (size_t i = 0; i < n; i++)
        bins[values[i] & (HISTOGRAM_BINS - 1u)]++;
}

uint32_t exclusive_scan_reference(const uint32_t *values, size_t n, uint32_t *prefix)
{
    uint32_t running = 0;
    for (size_t i = 0; i < n; i++) {
        prefix[i] = running;
        running += values[i];
    }
    return running;
}

size_t compact_odd_reference(const uint32_t *values, size_t n, uint32_t *out)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (values[i] & 1u)
            out[kept++] = values[i];
    return kept;
}
