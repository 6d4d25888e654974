/* debug_check.c - the debug builds' dead-object check of debug_check.h. */
#include "debug_check.h"

#ifndef NDEBUG
#include <stdio.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define FREED(p) __asan_address_is_poisoned(p)
#else
#define FREED(p) 0
#endif

static const char *kind_name(uint32_t magic)
{
    switch (magic) {
    case MOX__MAGIC_OP:
        return "op";
    case MOX__MAGIC_BATCH:
        return "batch";
    case MOX__MAGIC_BUFFER:
        return "buffer";
    default:
        return "device";
    }
}

static const char *what_ended_it(uint32_t magic)
{
    switch (magic) {
    case MOX__MAGIC_OP:
        return "dropped, or consumed by mox_batch_push, mox_op_then, mox_op_map or mox_op_share";
    case MOX__MAGIC_BATCH:
        return "ended or discarded";
    default:
        return "released";
    }
}

void mox__debug_check(const uint32_t *magic, uint32_t expected, const char *call)
{
    /* Reading a freed object is itself undefined: ASan is asked first, and
     * elsewhere the check only runs because the program is already lost. */
    if (!magic || (!FREED(magic) && *(const volatile uint32_t *)magic == expected))
        return;
    fprintf(stderr,
            "mox: %s: the %s is not live: it was already %s (undefined behaviour; "
            "caught by a debug build of libmox, see docs/async.md \"Ownership\")\n",
            call, kind_name(expected), what_ended_it(expected));
    abort();
}
#endif
