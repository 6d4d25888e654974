/* fuzz_support.h - what the fuzz targets share: a failed oracle aborts with
 * a message (libFuzzer then saves the input). */
#ifndef MOX_FUZZ_SUPPORT_H
#define MOX_FUZZ_SUPPORT_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond, ...)                                                \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "fuzz oracle failed (%s:%d): ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
            abort();                                                         \
        }                                                                    \
    } while (0)

#endif
