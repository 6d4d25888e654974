/* abi_json.c - the ABI's JSON form (docs/abi.md): canonical compact writing,
 * whose bytes bindings hash, and strict reading that names the offending
 * kernel, parameter or field and never trusts the input. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact_internal.h"
#include "core/alloc.h"

/* ---------------- writing ---------------- */

/* Every constructor below returns NULL on failure, and json_pack's "o"
 * (unlike "o?") fails on a NULL value and releases the values it was given,
 * so a failure anywhere comes out at the top as NULL with nothing leaked. */

static json_t *uint_value(uint64_t value)
{
    return value > INT64_MAX ? NULL : json_integer((json_int_t)value);
}

static json_t *feature_array(uint32_t bits, const char *const *names, int count)
{
    json_t *array = json_array();
    for (int i = 0; array && i < count; i++) {
        if ((bits & (1u << i)) && json_array_append_new(array, json_string(names[i])) != 0) {
            json_decref(array);
            return NULL;
        }
    }
    return array;
}

static json_t *layout_value(const mox_abi_layout *l, unsigned depth);

static json_t *fields_value(const mox_abi_layout *l, unsigned depth)
{
    json_t *fields = json_array();
    for (size_t i = 0; fields && i < l->field_count; i++) {
        const mox_abi_field *f = &l->fields[i];
        /* "alignment" only for over-aligned fields (ABI version 2), so
         * version-1 ABIs keep their exact text. */
        json_t *field = !f->name ? NULL
                        : f->align
                            ? json_pack("{s:s,s:o,s:o,s:o}", "name", f->name, "offset",
                                        uint_value(f->offset), "alignment", uint_value(f->align),
                                        "layout", layout_value(f->layout, depth + 1))
                            : json_pack("{s:s,s:o,s:o}", "name", f->name, "offset",
                                        uint_value(f->offset), "layout",
                                        layout_value(f->layout, depth + 1));
        if (json_array_append_new(fields, field) != 0) {
            json_decref(fields);
            fields = NULL;
        }
    }
    return fields;
}

/* depth: arrays and records around l. The writer keeps the ABI's nesting
 * limit only as a recursion bound: validated ABIs never reach it. */
static json_t *layout_value(const mox_abi_layout *l, unsigned depth)
{
    if (!l || (mox__layout_nests(l->kind) && depth >= MOX_ABI_MAX_LAYOUT_DEPTH))
        return NULL;
    json_t *size = uint_value(l->size), *align = uint_value(l->align);
    switch (l->kind) {
    case MOX_LAYOUT_SCALAR: {
        const char *name = mox_scalar_name(l->scalar);
        if (!name)
            break;
        return json_pack("{s:o,s:o,s:s,s:s}", "size", size, "alignment", align, "kind", "scalar",
                         "scalar", name);
    }
    case MOX_LAYOUT_VECTOR: {
        const char *name = mox_scalar_name(l->scalar);
        if (!name)
            break;
        return json_pack("{s:o,s:o,s:s,s:s,s:I}", "size", size, "alignment", align, "kind",
                         "vector", "scalar", name, "lanes", (json_int_t)l->length);
    }
    case MOX_LAYOUT_ARRAY: {
        json_t *element = layout_value(l->element, depth + 1);
        json_t *stride = l->element ? uint_value(l->element->size) : NULL;
        return json_pack("{s:o,s:o,s:s,s:o,s:o,s:o}", "size", size, "alignment", align, "kind",
                         "array", "element", element, "length", uint_value(l->length), "stride",
                         stride);
    }
    case MOX_LAYOUT_RECORD:
        if (!l->record_name)
            break;
        return json_pack("{s:o,s:o,s:s,s:s,s:o}", "size", size, "alignment", align, "kind",
                         "record", "name", l->record_name, "fields", fields_value(l, depth));
    }
    json_decref(size);
    json_decref(align);
    return NULL;
}

static json_t *param_value(const mox_abi_param *p)
{
    if (!p->name)
        return NULL;
    if (p->kind == MOX_PARAM_BUFFER) {
        static const char *const access[] = {"read", "write", "atomic"};
        if ((unsigned)p->access > MOX_PARAM_ATOMIC || !p->layout)
            return NULL;
        return json_pack("{s:s,s:I,s:s,s:s,s:o,s:o}", "name", p->name, "binding",
                         (json_int_t)p->binding, "kind", "buffer", "access", access[p->access],
                         "element", layout_value(p->layout, 0), "stride",
                         uint_value(p->layout->size));
    }
    return json_pack("{s:s,s:I,s:s,s:o}", "name", p->name, "binding", (json_int_t)p->binding,
                     "kind", p->kind == MOX_PARAM_TABLE ? "table" : "value", "layout",
                     layout_value(p->layout, 0));
}

static json_t *kernel_value(const mox_abi_kernel *k)
{
    json_t *block = k->has_required_block
                        ? json_pack("[I,I,I]", (json_int_t)k->required_block[0],
                                    (json_int_t)k->required_block[1], (json_int_t)k->required_block[2])
                        : json_null();
    json_t *params = json_array();
    for (size_t i = 0; params && i < k->param_count; i++) {
        if (json_array_append_new(params, param_value(&k->params[i])) != 0) {
            json_decref(params);
            params = NULL;
        }
    }
    if (!k->name) {
        json_decref(block);
        json_decref(params);
        return NULL;
    }
    return json_pack("{s:s,s:o,s:o,s:o}", "name", k->name, "required_block", block, "features",
                     feature_array(k->features, mox__kfeature_names, MOX__KFEATURE_COUNT),
                     "parameters", params);
}

json_t *mox__abi_to_value(const mox_abi *abi)
{
    if (!abi)
        return NULL;
    json_t *kernels = json_array();
    for (size_t i = 0; kernels && i < abi->kernel_count; i++) {
        if (json_array_append_new(kernels, kernel_value(&abi->kernels[i])) != 0) {
            json_decref(kernels);
            kernels = NULL;
        }
    }
    return json_pack("{s:I,s:o,s:o}", "version", (json_int_t)abi->version, "required_features",
                     feature_array(abi->required_features, mox__feature_names, MOX__FEATURE_COUNT),
                     "kernels", kernels);
}

char *mox_abi_to_json(const mox_abi *abi)
{
    json_t *root = mox__abi_to_value(abi);
    if (!root)
        return NULL;
    char *text = mox__json_dump(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    return text;
}

/* ---------------- reading ---------------- */

static bool get_features(const json_t *obj, const char *key, const char *what,
                         const char *const *names, int count, uint32_t *out, mox_artifact_error *err)
{
    const json_t *array = json_object_get(obj, key);
    size_t i;
    json_t *item;
    if (!json_is_array(array))
        return mox__fail(err, "%s: field \"%s\" must be an array of strings", what, key);
    *out = 0;
    json_array_foreach(array, i, item) {
        if (!json_is_string(item))
            return mox__fail(err, "%s: field \"%s\" must be an array of strings", what, key);
        const char *name = json_string_value(item);
        int bit = 0;
        while (bit < count && strcmp(name, names[bit]) != 0)
            bit++;
        if (bit == count)
            return mox__fail(err, "%s: unknown feature \"%s\" in \"%s\"", what, name, key);
        if (*out & (1u << bit))
            return mox__fail(err, "%s: duplicate feature \"%s\" in \"%s\"", what, name, key);
        *out |= 1u << bit;
    }
    return true;
}

#define NONCANONICAL "layout differs from its canonical size, alignment, offsets, or stride"

static const char *const scalar_keys[] = {"size", "alignment", "kind", "scalar"};
static const char *const array_keys[] = {"size", "alignment", "kind", "element", "length", "stride"};
static const char *const record_keys[] = {"size", "alignment", "kind", "name", "fields"};
static const char *const vector_keys[] = {"size", "alignment", "kind", "scalar", "lanes"};
static const char *const field_keys[] = {"name", "offset", "layout"};
static const char *const aligned_field_keys[] = {"name", "offset", "alignment", "layout"};

/* `top` names the parameter for the nesting rule's message (`what`, the
 * path down to this layout, may be truncated that deep); depth counts the
 * arrays and records around v. */
static bool read_layout(const json_t *v, const char *what, const char *top, unsigned depth,
                        mox_abi_layout **out, mox_artifact_error *err)
{
    char inner[sizeof err->message];
    const char *kind;
    *out = NULL;
    if (!json_is_object(v))
        return mox__fail(err, "%s must be a JSON object", what);
    if (!json_object_get(v, "kind"))
        return mox__fail(err, "%s: missing field \"kind\"", what);
    if (!mox__json_string(v, "kind", what, &kind, err))
        return false;
    if ((strcmp(kind, "array") == 0 || strcmp(kind, "record") == 0) &&
        depth >= MOX_ABI_MAX_LAYOUT_DEPTH)
        return mox__fail_too_deep(err, top, kind, json_string_value(json_object_get(v, "name")),
                                  depth + 1);
    mox_abi_layout *l = mox__calloc(1, sizeof *l);
    if (!l)
        return mox__fail_oom(err, "out of memory reading %s", what);
    *out = l;
    if (strcmp(kind, "scalar") == 0) {
        const char *name;
        l->kind = MOX_LAYOUT_SCALAR;
        if (!mox__json_object(v, what, scalar_keys, 4, err) || !mox__json_string(v, "scalar", what, &name, err))
            return false;
        if (!mox_scalar_from_name(name, &l->scalar))
            return mox__fail(err, "%s: unknown scalar type \"%s\"", what, name);
    } else if (strcmp(kind, "vector") == 0) {
        const char *name;
        l->kind = MOX_LAYOUT_VECTOR;
        if (!mox__json_object(v, what, vector_keys, 5, err) || !mox__json_string(v, "scalar", what, &name, err) ||
            !mox__json_uint(v, "lanes", 4, what, &l->length, err))
            return false;
        if (!mox_scalar_from_name(name, &l->scalar))
            return mox__fail(err, "%s: unknown scalar type \"%s\"", what, name);
    } else if (strcmp(kind, "array") == 0) {
        uint64_t stride;
        l->kind = MOX_LAYOUT_ARRAY;
        if (!mox__json_object(v, what, array_keys, 6, err) ||
            !mox__json_uint(v, "length", UINT64_MAX, what, &l->length, err) ||
            !mox__json_uint(v, "stride", UINT64_MAX, what, &stride, err))
            return false;
        mox__format(inner, sizeof inner, "%s array element", what);
        if (!read_layout(json_object_get(v, "element"), inner, top, depth + 1, &l->element, err))
            return false;
        if (stride != l->element->size)
            return mox__fail(err, "%s: " NONCANONICAL " (array stride %" PRIu64
                             " differs from its element size %" PRIu64 ")", what, stride, l->element->size);
    } else if (strcmp(kind, "record") == 0) {
        l->kind = MOX_LAYOUT_RECORD;
        if (!mox__json_object(v, what, record_keys, 5, err) || !mox__json_strdup(v, "name", what, &l->record_name, err))
            return false;
        const json_t *fields = json_object_get(v, "fields");
        if (!json_is_array(fields))
            return mox__fail(err, "%s: field \"fields\" must be an array", what);
        size_t count = json_array_size(fields);
        if (count && !(l->fields = mox__calloc(count, sizeof *l->fields)))
            return mox__fail_oom(err, "out of memory reading %s", what);
        l->field_count = count;
        for (size_t i = 0; i < count; i++) {
            const json_t *f = json_array_get(fields, i);
            mox__format(inner, sizeof inner, "%s field %zu of record %s", what, i, l->record_name);
            bool aligned = json_is_object(f) && json_object_get(f, "alignment");
            if (!mox__json_object(f, inner, aligned ? aligned_field_keys : field_keys, aligned ? 4 : 3, err) ||
                !mox__json_strdup(f, "name", inner, &l->fields[i].name, err))
                return false;
            mox__format(inner, sizeof inner, "%s field %s.%s", what, l->record_name, l->fields[i].name);
            if ((aligned &&
                 !mox__json_uint(f, "alignment", UINT64_MAX, inner, &l->fields[i].align, err)) ||
                !mox__json_uint(f, "offset", UINT64_MAX, inner, &l->fields[i].offset, err) ||
                !read_layout(json_object_get(f, "layout"), inner, top, depth + 1,
                             &l->fields[i].layout, err))
                return false;
        }
    } else {
        return mox__fail(err, "%s: unknown layout kind \"%s\"", what, kind);
    }
    return mox__json_uint(v, "size", UINT64_MAX, what, &l->size, err) &&
           mox__json_uint(v, "alignment", UINT64_MAX, what, &l->align, err);
}

static const char *const buffer_keys[] = {"name", "binding", "kind", "access", "element", "stride"};
static const char *const value_keys[] = {"name", "binding", "kind", "layout"};

static bool read_param(const json_t *v, const char *kernel, size_t index, mox_abi_param *p,
                       mox_artifact_error *err)
{
    char what[sizeof err->message];
    const char *kind;
    uint64_t binding;
    mox__format(what, sizeof what, "kernel %s parameter %zu", kernel, index);
    if (!json_is_object(v))
        return mox__fail(err, "%s must be a JSON object", what);
    if (!json_object_get(v, "kind"))
        return mox__fail(err, "%s: missing field \"kind\"", what);
    if (!mox__json_string(v, "kind", what, &kind, err))
        return false;
    if (strcmp(kind, "buffer") == 0) {
        p->kind = MOX_PARAM_BUFFER;
        if (!mox__json_object(v, what, buffer_keys, 6, err))
            return false;
    } else if (strcmp(kind, "value") == 0 || strcmp(kind, "table") == 0) {
        p->kind = strcmp(kind, "value") == 0 ? MOX_PARAM_VALUE : MOX_PARAM_TABLE;
        if (!mox__json_object(v, what, value_keys, 4, err))
            return false;
    } else {
        return mox__fail(err, "%s: unknown parameter kind \"%s\" (expected \"buffer\", \"value\" or \"table\")",
                         what, kind);
    }
    if (!mox__json_strdup(v, "name", what, &p->name, err) ||
        !mox__json_uint(v, "binding", UINT32_MAX, what, &binding, err))
        return false;
    p->binding = (uint32_t)binding;
    mox__format(what, sizeof what, "kernel %s parameter %s", kernel, p->name);
    if (p->kind != MOX_PARAM_BUFFER) {
        p->access = MOX_PARAM_READ;
        return read_layout(json_object_get(v, "layout"), what, what, 0, &p->layout, err);
    }
    const char *access;
    uint64_t stride;
    if (!mox__json_string(v, "access", what, &access, err))
        return false;
    if (strcmp(access, "read") == 0)
        p->access = MOX_PARAM_READ;
    else if (strcmp(access, "write") == 0)
        p->access = MOX_PARAM_WRITE;
    else if (strcmp(access, "atomic") == 0)
        p->access = MOX_PARAM_ATOMIC;
    else
        return mox__fail(err, "%s: unknown access \"%s\" (expected \"read\", \"write\" or \"atomic\")",
                         what, access);
    if (!mox__json_uint(v, "stride", UINT64_MAX, what, &stride, err))
        return false;
    char element[sizeof err->message];
    mox__format(element, sizeof element, "%s element", what);
    /* The element's own faults say more than the stride mismatch they cause. */
    if (!read_layout(json_object_get(v, "element"), element, element, 0, &p->layout, err) ||
        !mox__layout_check(p->layout, element, err))
        return false;
    if (stride != p->layout->size)
        return mox__fail(err, "%s: buffer stride %" PRIu64 " differs from its element size %" PRIu64
                         " (" NONCANONICAL ")", what, stride, p->layout->size);
    return true;
}

static const char *const kernel_keys[] = {"name", "required_block", "features", "parameters"};

static bool read_kernel(const json_t *v, size_t index, mox_abi_kernel *k, mox_artifact_error *err)
{
    char what[sizeof err->message];
    mox__format(what, sizeof what, "kernel %zu", index);
    if (!mox__json_object(v, what, kernel_keys, 4, err) || !mox__json_strdup(v, "name", what, &k->name, err))
        return false;
    mox__format(what, sizeof what, "kernel %s", k->name);
    const json_t *block = json_object_get(v, "required_block");
    if (!json_is_null(block)) {
        if (!json_is_array(block) || json_array_size(block) != 3)
            return mox__fail(err, "%s: field \"required_block\" must be null or an array of 3 integers", what);
        for (size_t i = 0; i < 3; i++) {
            const json_t *n = json_array_get(block, i);
            if (!json_is_integer(n) || json_integer_value(n) < 0 || json_integer_value(n) > UINT32_MAX)
                return mox__fail(err, "%s has an invalid block requirement (each axis must be an "
                                 "integer from 1 to %" PRIu32 ")", what, UINT32_MAX);
            k->required_block[i] = (uint32_t)json_integer_value(n);
        }
        k->has_required_block = true;
    }
    if (!get_features(v, "features", what, mox__kfeature_names, MOX__KFEATURE_COUNT, &k->features, err))
        return false;
    const json_t *params = json_object_get(v, "parameters");
    if (!json_is_array(params))
        return mox__fail(err, "%s: field \"parameters\" must be an array", what);
    size_t count = json_array_size(params);
    if (count > MOX_ABI_MAX_PARAMS)
        return mox__fail(err, "kernel %s exceeds %d parameters (it has %zu)", k->name,
                         MOX_ABI_MAX_PARAMS, count);
    if (count && !(k->params = mox__calloc(count, sizeof *k->params)))
        return mox__fail_oom(err, "out of memory reading %s", what);
    k->param_count = count;
    for (size_t i = 0; i < count; i++)
        if (!read_param(json_array_get(params, i), k->name, i, &k->params[i], err))
            return false;
    return true;
}

static const char *const abi_keys[] = {"version", "required_features", "kernels"};

bool mox__abi_from_value(const json_t *v, mox_abi **out, mox_artifact_error *err)
{
    *out = NULL;
    if (!json_is_object(v))
        return mox__fail(err, "the ABI must be a JSON object");
    /* Version first, so another format version gets this message rather
     * than a complaint about a field it renamed. */
    const json_t *version = json_object_get(v, "version");
    if (!version)
        return mox__fail(err, "ABI: missing field \"version\"");
    if (!json_is_integer(version))
        return mox__fail(err, "ABI: field \"version\" must be an integer");
    if (json_integer_value(version) < MOX_ABI_VERSION_MIN || json_integer_value(version) > MOX_ABI_VERSION)
        return mox__fail(err, "unsupported kernel ABI version %" JSON_INTEGER_FORMAT
                         " (this mox reads versions %d to %d)", json_integer_value(version),
                         MOX_ABI_VERSION_MIN, MOX_ABI_VERSION);
    if (!mox__json_object(v, "ABI", abi_keys, 3, err))
        return false;
    mox_abi *abi = mox__calloc(1, sizeof *abi);
    if (!abi)
        return mox__fail_oom(err, "out of memory reading the ABI");
    abi->version = (uint32_t)json_integer_value(version);
    bool ok = get_features(v, "required_features", "ABI", mox__feature_names, MOX__FEATURE_COUNT,
                           &abi->required_features, err);
    const json_t *kernels = json_object_get(v, "kernels");
    if (ok && !json_is_array(kernels))
        ok = mox__fail(err, "ABI: field \"kernels\" must be an array");
    size_t count = ok ? json_array_size(kernels) : 0;
    if (count && !(abi->kernels = mox__calloc(count, sizeof *abi->kernels)))
        ok = mox__fail_oom(err, "out of memory reading the ABI");
    if (ok)
        abi->kernel_count = count;
    for (size_t i = 0; ok && i < count; i++)
        ok = read_kernel(json_array_get(kernels, i), i, &abi->kernels[i], err);
    if (!ok || !mox_abi_validate(abi, err)) {
        mox_abi_free(abi);
        return false;
    }
    *out = abi;
    return true;
}

bool mox_abi_from_json(const char *text, size_t length, mox_abi **out, mox_artifact_error *err)
{
    *out = NULL;
    if (!text)
        return mox__fail(err, "no ABI JSON text");
    json_t *root = mox__json_parse(text, length, "the ABI", err);
    if (!root)
        return false;
    bool ok = mox__abi_from_value(root, out, err);
    json_decref(root);
    return ok;
}
