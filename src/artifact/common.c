/* common.c - small helpers of the artifact layer: error text, string copies,
 * identifier rules and the feature-name tables (docs/abi.md). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact_internal.h"
#include "core/alloc.h"

const char *const mox__kfeature_names[MOX__KFEATURE_COUNT] = {
    "barrier", "warp", "atomics", "fail", "shared", "f16", "dynamic_shared", "gate_deferred",
};
const char *const mox__feature_names[MOX__FEATURE_COUNT] = {"atomics", "warp_ops"};

static bool fail(mox_artifact_error *err, bool out_of_memory, const char *fmt, va_list ap)
{
    if (err) {
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        err->out_of_memory = out_of_memory;
    }
    return false;
}

bool mox__fail(mox_artifact_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail(err, false, fmt, ap);
    va_end(ap);
    return false;
}

bool mox__fail_oom(mox_artifact_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail(err, true, fmt, ap);
    va_end(ap);
    return false;
}

void mox__error_prefix(mox_artifact_error *err, const char *prefix)
{
    if (!err)
        return;
    char inner[sizeof err->message];
    memcpy(inner, err->message, sizeof inner);
    mox__format(err->message, sizeof err->message, "%s: %s", prefix, inner);
}

bool mox__fail_too_deep(mox_artifact_error *err, const char *what, const char *layout_kind,
                        const char *name, unsigned level)
{
    return mox__fail(err, "%s nests arrays and records more than %d levels deep (%s%s%s at level "
                     "%u); the ABI allows at most %d", what, MOX_ABI_MAX_LAYOUT_DEPTH, layout_kind,
                     name ? " " : "", name ? name : "", level, MOX_ABI_MAX_LAYOUT_DEPTH);
}

typedef struct dump_buffer {
    char *data;
    size_t len, cap;
    bool failed;
} dump_buffer;

static int dump_append(const char *text, size_t size, void *p)
{
    dump_buffer *b = p;
    if (!b->failed && b->len + size + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + size + 1)
            cap *= 2;
        char *data = mox__realloc(b->data, cap);
        if (data) {
            b->data = data;
            b->cap = cap;
        } else {
            b->failed = true;
        }
    }
    if (b->failed)
        return -1;
    memcpy(b->data + b->len, text, size);
    b->len += size;
    b->data[b->len] = '\0';
    return 0;
}

char *mox__json_dump(const json_t *value, size_t flags)
{
    dump_buffer b = {NULL, 0, 0, false};
    if (json_dump_callback(value, dump_append, &b, flags) != 0 || b.failed || !b.data) {
        mox__free(b.data);
        return NULL;
    }
    return b.data;
}

json_t *mox__json_parse(const char *text, size_t length, const char *what, mox_artifact_error *err)
{
    json_error_t jerr;
    /* Test builds: the whole parse is one injectable allocation (alloc.h). */
    if (!mox__alloc_parse_begin()) {
        mox__fail_oom(err, "out of memory parsing %s", what);
        return NULL;
    }
    json_t *root = json_loadb(text, length, JSON_REJECT_DUPLICATES, &jerr);
    mox__alloc_parse_end();
    if (root)
        return root;
    if (json_error_code(&jerr) == json_error_out_of_memory)
        mox__fail_oom(err, "out of memory parsing %s", what);
    else
        mox__fail(err, "%s is not valid JSON: %s (line %d, column %d, byte %d)", what, jerr.text,
                  jerr.line, jerr.column, jerr.position);
    return NULL;
}

void mox__format(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

char *mox__strdup(const char *text) { return mox__str_dup(text); }

/* C11 and C++ keywords plus the alternative operator spellings: a name from
 * this list cannot be used in both the C bindings and the CUDA TU. */
static const char *const reserved[] = {
    "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary",
    "_Noreturn", "_Static_assert", "_Thread_local", "alignas", "alignof", "and", "and_eq",
    "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char", "char16_t",
    "char32_t", "char8_t", "class", "co_await", "co_return", "co_yield", "compl", "concept",
    "const", "const_cast", "consteval", "constexpr", "constinit", "continue", "decltype",
    "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export",
    "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long",
    "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
    "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires",
    "restrict", "return", "short", "signed", "sizeof", "static", "static_assert",
    "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true",
    "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void",
    "volatile", "wchar_t", "while", "xor", "xor_eq",
};

bool mox__is_identifier(const char *text)
{
    if (!text || !*text)
        return false;
    for (const char *p = text; *p; p++) {
        char c = *p;
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        bool digit = c >= '0' && c <= '9';
        if (!alpha && !(digit && p != text))
            return false;
    }
    return !mox_abi_is_reserved_name(text);
}

bool mox_abi_is_reserved_name(const char *name)
{
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcmp(name, reserved[i]) == 0)
            return true;
    return false;
}

/* `v` is an object whose keys are exactly `keys`. */
bool mox__json_object(const json_t *v, const char *what, const char *const *keys, size_t count,
                          mox_artifact_error *err)
{
    if (!json_is_object(v))
        return mox__fail(err, "%s must be a JSON object", what);
    const char *key;
    json_t *child;
    json_object_foreach((json_t *)v, key, child) {
        size_t i = 0;
        while (i < count && strcmp(key, keys[i]) != 0)
            i++;
        if (i == count)
            return mox__fail(err, "%s: unknown field \"%s\"", what, key);
    }
    for (size_t i = 0; i < count; i++)
        if (!json_object_get(v, keys[i]))
            return mox__fail(err, "%s: missing field \"%s\"", what, keys[i]);
    return true;
}

bool mox__json_uint(const json_t *obj, const char *key, uint64_t max, const char *what,
                     uint64_t *out, mox_artifact_error *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
        return max >= INT64_MAX
                   ? mox__fail(err, "%s: field \"%s\" must be a non-negative integer", what, key)
                   : mox__fail(err, "%s: field \"%s\" must be an integer from 0 to %" PRIu64, what,
                               key, max);
    *out = (uint64_t)json_integer_value(v);
    return true;
}

bool mox__json_string(const json_t *obj, const char *key, const char *what, const char **out,
                       mox_artifact_error *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        return mox__fail(err, "%s: field \"%s\" must be a string", what, key);
    *out = json_string_value(v);
    return true;
}

bool mox__json_strdup(const json_t *obj, const char *key, const char *what, char **out,
                       mox_artifact_error *err)
{
    const char *text = NULL;
    if (!mox__json_string(obj, key, what, &text, err))
        return false;
    if (!(*out = mox__strdup(text)))
        return mox__fail_oom(err, "out of memory reading %s", what);
    return true;
}

