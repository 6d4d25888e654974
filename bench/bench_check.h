/* bench_check.h - CHECK_MOX(call): a benchmark program stops at the first
 * failed mox call, naming the call, its status and the runtime's message
 * (a benchmark has no way to recover, and a figure after a failure would
 * be meaningless). */
#ifndef MOX_BENCH_CHECK_H
#define MOX_BENCH_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <mox/mox.h>

#define CHECK_MOX(x)                                                                               \
    do {                                                                                           \
        mox_status st_ = (x);                                                                      \
        if (st_ != MOX_OK) {                                                                       \
            fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #x, mox_status_name(st_),  \
                    mox_error_last_message());                                                     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#endif
