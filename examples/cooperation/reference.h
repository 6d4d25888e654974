/* reference.h - plain-C references for the cooperation example. */
#ifndef COOPERATION_REFERENCE_H
#define COOPERATION_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#define HISTOGRAM_BINS 16u

/* bins[b] = number of i < n with (values[i] & 15) == b. */
void histogram_reference(const uint32_t *values, size_t n, uint32_t bins[HISTOGRAM_BINS]);
/* prefix[i] = values[0] + ... + values[i-1] modulo 2^32; returns the total. */
uint32_t exclusive_scan_reference(const uint32_t *values, size_t n, uint32_t *prefix);
/* Writes the odd values in order to out; returns how many. */
size_t compact_odd_reference(const uint32_t *values, size_t n, uint32_t *out);

#endif
