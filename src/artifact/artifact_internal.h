/* artifact_internal.h - helpers shared by the artifact layer's sources
 * (error text, identifiers, feature-name tables, JSON<->ABI pieces the
 * manifest reuses). Not part of the interface other parts build against. */
#ifndef MOX_ARTIFACT_INTERNAL_H
#define MOX_ARTIFACT_INTERNAL_H

#include <jansson.h>

#include "abi.h"

/* Fills err (may be NULL) and returns false, so callers can `return mox__fail(...)`. */
bool mox__fail(mox_artifact_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same for a failed host allocation (err->out_of_memory). */
bool mox__fail_oom(mox_artifact_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Puts `prefix: ` before err's message, keeping whether it was out of memory. */
void mox__error_prefix(mox_artifact_error *err, const char *prefix);

/* The nesting rule's message for an array or record at `level` (> the limit). */
bool mox__fail_too_deep(mox_artifact_error *err, const char *what, const char *layout_kind,
                        const char *name, unsigned level);

/* Arrays and records are the levels the nesting limit counts; scalars and
 * vectors are leaves. */
static inline bool mox__layout_nests(mox_layout_kind kind)
{
    return kind == MOX_LAYOUT_ARRAY || kind == MOX_LAYOUT_RECORD;
}

/* json_dumps that cannot lose bytes: jansson 2.14 ignores a failed write of
 * an object key while dumping (the key is left out and the text goes on),
 * so the text is written through a callback whose failures stick, and any
 * failure gives NULL. mox__malloc'd, NUL-terminated. */
char *mox__json_dump(const json_t *value, size_t flags);

/* json_loadb with duplicate keys rejected; `what` names the text in the
 * message. jansson's out-of-memory result is reported as such. */
json_t *mox__json_parse(const char *text, size_t length, const char *what, mox_artifact_error *err);

/* snprintf for context text, where truncating a long name is acceptable. */
void mox__format(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

char *mox__strdup(const char *text);

/* A C identifier that is not a C or C++ keyword: names end up in generated
 * C bindings and in the CUDA translation unit, which nvcc compiles as C++. */
bool mox__is_identifier(const char *text);

/* Checks that `layout` equals its canonical layout (docs/abi.md); `what`
 * names it in the message ("kernel k parameter p"). */
bool mox__layout_check(const mox_abi_layout *layout, const char *what, mox_artifact_error *err);

/* A field's effective alignment: its own `align`, else its layout's. */
uint64_t mox__field_align(const mox_abi_field *field);
/* Whether a layout holds a vector or an over-aligned field (ABI version 2). */
bool mox__layout_needs_v2(const mox_abi_layout *layout);

/* Feature names in bit order; NULL past the end. */
#define MOX__KFEATURE_COUNT 8
#define MOX__FEATURE_COUNT 2
extern const char *const mox__kfeature_names[MOX__KFEATURE_COUNT];
extern const char *const mox__feature_names[MOX__FEATURE_COUNT];

/* The ABI as a jansson value in canonical key order (new reference), NULL on
 * OOM or an ABI that breaks a rule the writer depends on (a NULL name or
 * layout, a number beyond the JSON integer range, nesting past the limit). */
json_t *mox__abi_to_value(const mox_abi *abi);
/* Strictly decodes and validates an already parsed ABI object. */
bool mox__abi_from_value(const json_t *value, mox_abi **out, mox_artifact_error *err);

/* Strict JSON reading: each fails with "<what>: ..." naming the field. */
/* `v` is an object whose keys are exactly keys[0..count). */
bool mox__json_object(const json_t *v, const char *what, const char *const *keys, size_t count,
                      mox_artifact_error *err);
bool mox__json_uint(const json_t *obj, const char *key, uint64_t max, const char *what,
                    uint64_t *out, mox_artifact_error *err);
/* *out borrows from obj. */
bool mox__json_string(const json_t *obj, const char *key, const char *what, const char **out,
                      mox_artifact_error *err);
bool mox__json_strdup(const json_t *obj, const char *key, const char *what, char **out,
                      mox_artifact_error *err);

/* The manifest's "cpu" section (manifest_cpu.c). */
struct mox_manifest;
bool mox__manifest_read_cpu(const json_t *cpu, struct mox_manifest *m, mox_artifact_error *err);
/* Rules relating the section to the ABI; after the ABI was read. */
bool mox__manifest_check_cpu(const struct mox_manifest *m, mox_artifact_error *err);
json_t *mox__manifest_cpu_to_value(const struct mox_manifest *m);
void mox__manifest_free_cpu(struct mox_manifest *m);

#endif
