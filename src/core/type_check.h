/* type_check.h - whether a mox_type descriptor describes a type
 * (docs/abi.md): its signature parses and its size and alignment are the
 * ones its signature lays out. */
#ifndef MOX_CORE_TYPE_CHECK_H
#define MOX_CORE_TYPE_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include <mox/types.h>

/* True for a built-in type (at once) and for a descriptor whose signature
 * parses by docs/abi.md's grammar with canonical offsets, and whose size
 * and alignment are its signature's. Else false with `why` saying what is
 * wrong, for "<who>: <why>" messages: "its size is 2 bytes, but its
 * signature f32 has size 4 (docs/abi.md)", "'x' is not a type signature
 * (<what> at character <n>; docs/abi.md)", "it has no signature". `type`
 * is not NULL. */
bool mox__type_check(const mox_type *type, char *why, size_t why_size);

#endif
