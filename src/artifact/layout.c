/* layout.c - canonical C layouts of ABI types: scalars, arrays, records,
 * their construction with overflow checks, comparison, the canonical check
 * the validator runs, and the signature text mox_type.signature holds. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact_internal.h"
#include "core/alloc.h"

static const char *const scalar_names[MOX_SCALAR_COUNT_] = {
    "f32", "f16", "u32", "i32", "u16", "i16", "u8", "i8",
};
static const uint32_t scalar_sizes[MOX_SCALAR_COUNT_] = {4, 2, 4, 4, 2, 2, 1, 1};

const char *mox_scalar_name(mox_scalar s)
{
    return (unsigned)s < MOX_SCALAR_COUNT_ ? scalar_names[s] : NULL;
}

bool mox_scalar_from_name(const char *name, mox_scalar *out)
{
    for (int i = 0; name && i < MOX_SCALAR_COUNT_; i++) {
        if (strcmp(name, scalar_names[i]) == 0) {
            *out = (mox_scalar)i;
            return true;
        }
    }
    return false;
}

uint32_t mox_scalar_size(mox_scalar s)
{
    return (unsigned)s < MOX_SCALAR_COUNT_ ? scalar_sizes[s] : 0;
}

static bool is_power_of_two(uint64_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

uint64_t mox__field_align(const mox_abi_field *field)
{
    return field->align ? field->align : field->layout->align;
}

/* align is a power of two; false on overflow. */
static bool align_up(uint64_t value, uint64_t align, uint64_t *out)
{
    if (value > UINT64_MAX - (align - 1))
        return false;
    *out = (value + align - 1) & ~(align - 1);
    return true;
}

mox_abi_layout *mox_abi_layout_scalar(mox_scalar s)
{
    if ((unsigned)s >= MOX_SCALAR_COUNT_)
        return NULL;
    mox_abi_layout *l = mox__calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->kind = MOX_LAYOUT_SCALAR;
    l->scalar = s;
    l->size = l->align = scalar_sizes[s];
    return l;
}

bool mox_abi_vector_supported(mox_scalar lane, uint64_t lanes)
{
    if (lane == MOX_SCALAR_F16)
        return lanes == 2;
    return (lane == MOX_SCALAR_F32 || lane == MOX_SCALAR_I32 || lane == MOX_SCALAR_U32) && lanes >= 2 &&
           lanes <= 4;
}

/* CUDA's vector layouts: 2 and 4 lanes are aligned to their size, 3 lanes
 * to one lane (float3 is 12 bytes, aligned 4). */
static uint64_t vector_align(mox_scalar lane, uint64_t lanes)
{
    return lanes == 3 ? scalar_sizes[lane] : (uint64_t)scalar_sizes[lane] * lanes;
}

mox_abi_layout *mox_abi_layout_vector(mox_scalar lane, uint64_t lanes)
{
    if (!mox_abi_vector_supported(lane, lanes))
        return NULL;
    mox_abi_layout *l = mox__calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->kind = MOX_LAYOUT_VECTOR;
    l->scalar = lane;
    l->length = lanes;
    l->size = (uint64_t)scalar_sizes[lane] * lanes;
    l->align = vector_align(lane, lanes);
    return l;
}

mox_abi_layout *mox_abi_layout_array(mox_abi_layout *element, uint64_t length)
{
    if (!element)
        return NULL;
    mox_abi_layout *l = NULL;
    if (length == 0 || element->size > MOX_ABI_MAX_LAYOUT_SIZE / length ||
        !(l = mox__calloc(1, sizeof *l))) {
        mox_abi_layout_free(element);
        return NULL;
    }
    l->kind = MOX_LAYOUT_ARRAY;
    l->element = element;
    l->length = length;
    l->size = element->size * length;
    l->align = element->align;
    return l;
}

/* The canonical offsets, alignment and size of a record's fields; false on
 * overflow past MOX_ABI_MAX_LAYOUT_SIZE or a field alignment that is not a
 * power of two. offsets may be NULL. */
static bool record_canonical(const mox_abi_field *fields, size_t count, uint64_t *offsets,
                             uint64_t *size, uint64_t *align)
{
    uint64_t end = 0, max_align = 1;
    for (size_t i = 0; i < count; i++) {
        const mox_abi_layout *f = fields[i].layout;
        uint64_t offset, field_align = f ? mox__field_align(&fields[i]) : 0;
        if (!f || !is_power_of_two(field_align) || !is_power_of_two(f->align) ||
            (fields[i].align && fields[i].align <= f->align) || !align_up(end, field_align, &offset) ||
            f->size > MOX_ABI_MAX_LAYOUT_SIZE - offset)
            return false;
        if (offsets)
            offsets[i] = offset;
        end = offset + f->size;
        if (field_align > max_align)
            max_align = field_align;
    }
    if (!align_up(end, max_align, size) || *size > MOX_ABI_MAX_LAYOUT_SIZE)
        return false;
    *align = max_align;
    return true;
}

static void free_fields(mox_abi_field *fields, size_t count)
{
    for (size_t i = 0; fields && i < count; i++) {
        mox__free(fields[i].name);
        mox_abi_layout_free(fields[i].layout);
    }
    mox__free(fields);
}

mox_abi_layout *mox_abi_layout_record(const char *name, mox_abi_field *fields, size_t count)
{
    mox_abi_layout *l = NULL;
    uint64_t size, align;
    if (!name || !mox__is_identifier(name) || !fields || count == 0)
        goto fail;
    for (size_t i = 0; i < count; i++) {
        if (!fields[i].name || !mox__is_identifier(fields[i].name) || !fields[i].layout)
            goto fail;
        for (size_t j = 0; j < i; j++)
            if (strcmp(fields[i].name, fields[j].name) == 0)
                goto fail;
    }
    uint64_t *offsets = mox__malloc(count * sizeof *offsets);
    if (!offsets)
        goto fail;
    if (!record_canonical(fields, count, offsets, &size, &align) || !(l = mox__calloc(1, sizeof *l)) ||
        !(l->record_name = mox__strdup(name))) {
        mox__free(offsets);
        mox__free(l);
        l = NULL;
        goto fail;
    }
    for (size_t i = 0; i < count; i++)
        fields[i].offset = offsets[i];
    mox__free(offsets);
    l->kind = MOX_LAYOUT_RECORD;
    l->fields = fields;
    l->field_count = count;
    l->size = size;
    l->align = align;
    return l;
fail:
    free_fields(fields, count);
    return NULL;
}

void mox_abi_layout_free(mox_abi_layout *layout)
{
    if (!layout)
        return;
    mox_abi_layout_free(layout->element);
    mox__free(layout->record_name);
    free_fields(layout->fields, layout->field_count);
    mox__free(layout);
}

mox_abi_layout *mox_abi_layout_clone(const mox_abi_layout *layout)
{
    if (!layout)
        return NULL;
    mox_abi_layout *c = mox__calloc(1, sizeof *c);
    if (!c)
        return NULL;
    *c = *layout;
    c->element = NULL;
    c->record_name = NULL;
    c->fields = NULL;
    c->field_count = 0;
    if (layout->element && !(c->element = mox_abi_layout_clone(layout->element)))
        goto fail;
    if (layout->record_name && !(c->record_name = mox__strdup(layout->record_name)))
        goto fail;
    if (layout->fields && layout->field_count) {
        if (!(c->fields = mox__calloc(layout->field_count, sizeof *c->fields)))
            goto fail;
        c->field_count = layout->field_count;
        for (size_t i = 0; i < layout->field_count; i++) {
            c->fields[i].offset = layout->fields[i].offset;
            c->fields[i].align = layout->fields[i].align;
            if ((layout->fields[i].name && !(c->fields[i].name = mox__strdup(layout->fields[i].name))) ||
                (layout->fields[i].layout && !(c->fields[i].layout = mox_abi_layout_clone(layout->fields[i].layout))))
                goto fail;
        }
    }
    return c;
fail:
    mox_abi_layout_free(c);
    return NULL;
}

static bool str_equal(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

bool mox_abi_layout_equal(const mox_abi_layout *a, const mox_abi_layout *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->kind != b->kind || a->size != b->size || a->align != b->align)
        return false;
    switch (a->kind) {
    case MOX_LAYOUT_SCALAR:
        return a->scalar == b->scalar;
    case MOX_LAYOUT_VECTOR:
        return a->scalar == b->scalar && a->length == b->length;
    case MOX_LAYOUT_ARRAY:
        return a->length == b->length && mox_abi_layout_equal(a->element, b->element);
    case MOX_LAYOUT_RECORD:
        if (!str_equal(a->record_name, b->record_name) || a->field_count != b->field_count)
            return false;
        for (size_t i = 0; i < a->field_count; i++)
            if (!str_equal(a->fields[i].name, b->fields[i].name) ||
                a->fields[i].offset != b->fields[i].offset || a->fields[i].align != b->fields[i].align ||
                !mox_abi_layout_equal(a->fields[i].layout, b->fields[i].layout))
                return false;
        return true;
    }
    return false;
}

/* ---- canonical check ---- */

#define NONCANONICAL "layout differs from its canonical size, alignment, offsets, or stride"

/* Recursion is bounded: mox__layout_check runs the depth check first. */
static bool check(const mox_abi_layout *l, const char *what, mox_artifact_error *err)
{
    char inner[sizeof err->message];
    if (!l)
        return mox__fail(err, "%s: missing layout", what);
    if (l->size > MOX_ABI_MAX_LAYOUT_SIZE)
        return mox__fail(err, "%s: layout size %" PRIu64 " exceeds the limit of %" PRIu64 " bytes",
                         what, l->size, (uint64_t)MOX_ABI_MAX_LAYOUT_SIZE);
    switch (l->kind) {
    case MOX_LAYOUT_SCALAR:
        if ((unsigned)l->scalar >= MOX_SCALAR_COUNT_)
            return mox__fail(err, "%s: unknown scalar type %d", what, (int)l->scalar);
        if (l->size != scalar_sizes[l->scalar] || l->align != scalar_sizes[l->scalar])
            return mox__fail(err, "%s: " NONCANONICAL " (scalar %s has size %" PRIu64
                             " and alignment %" PRIu64 ", canonical %u)", what,
                             scalar_names[l->scalar], l->size, l->align, scalar_sizes[l->scalar]);
        return true;
    case MOX_LAYOUT_VECTOR:
        if ((unsigned)l->scalar >= MOX_SCALAR_COUNT_ || !mox_abi_vector_supported(l->scalar, l->length))
            return mox__fail(err, "%s: unsupported vector type (%" PRIu64 " lanes of %s; the vectors are f32, "
                             "i32 and u32 with 2 to 4 lanes and f16 with 2)", what, l->length,
                             (unsigned)l->scalar < MOX_SCALAR_COUNT_ ? scalar_names[l->scalar] : "?");
        if (l->size != (uint64_t)scalar_sizes[l->scalar] * l->length || l->align != vector_align(l->scalar, l->length))
            return mox__fail(err, "%s: " NONCANONICAL " (vector %sx%" PRIu64 " has size %" PRIu64
                             " and alignment %" PRIu64 ", canonical %" PRIu64 " and %" PRIu64 ")", what,
                             scalar_names[l->scalar], l->length, l->size, l->align,
                             (uint64_t)scalar_sizes[l->scalar] * l->length, vector_align(l->scalar, l->length));
        return true;
    case MOX_LAYOUT_ARRAY:
        if (l->length == 0)
            return mox__fail(err, "%s: array length must be at least 1", what);
        mox__format(inner, sizeof inner, "%s array element", what);
        if (!check(l->element, inner, err))
            return false;
        if (l->element->size > MOX_ABI_MAX_LAYOUT_SIZE / l->length)
            return mox__fail(err, "%s: array of %" PRIu64 " elements of %" PRIu64
                             " bytes exceeds the limit of %" PRIu64 " bytes", what, l->length,
                             l->element->size, (uint64_t)MOX_ABI_MAX_LAYOUT_SIZE);
        if (l->size != l->element->size * l->length || l->align != l->element->align)
            return mox__fail(err, "%s: " NONCANONICAL " (array has size %" PRIu64 " and alignment %"
                             PRIu64 ", canonical %" PRIu64 " and %" PRIu64 ")", what, l->size,
                             l->align, l->element->size * l->length, l->element->align);
        return true;
    case MOX_LAYOUT_RECORD: {
        const char *name = l->record_name ? l->record_name : "";
        if (!mox__is_identifier(name))
            return mox__fail(err, "%s: record name \"%s\" is not a valid identifier", what, name);
        if (l->field_count == 0 || !l->fields)
            return mox__fail(err, "%s: record %s has no fields", what, name);
        for (size_t i = 0; i < l->field_count; i++) {
            const char *field = l->fields[i].name ? l->fields[i].name : "";
            if (!mox__is_identifier(field))
                return mox__fail(err, "%s: record %s field name \"%s\" is not a valid identifier",
                                 what, name, field);
            for (size_t j = 0; j < i; j++)
                if (strcmp(field, l->fields[j].name) == 0)
                    return mox__fail(err, "%s: record %s has a duplicate field name \"%s\"", what,
                                     name, field);
            mox__format(inner, sizeof inner, "%s field %s.%s", what, name, field);
            if (!check(l->fields[i].layout, inner, err))
                return false;
        }
        uint64_t size, align, end = 0, max_align = 1;
        for (size_t i = 0; i < l->field_count; i++) {
            const mox_abi_layout *f = l->fields[i].layout;
            uint64_t offset, field_align = mox__field_align(&l->fields[i]);
            if (l->fields[i].align && (!is_power_of_two(l->fields[i].align) || l->fields[i].align <= f->align))
                return mox__fail(err, "%s: " NONCANONICAL " (field %s.%s has alignment %" PRIu64
                                 "; an explicit field alignment is a power of two above its type's "
                                 "alignment %" PRIu64 ")", what, name, l->fields[i].name,
                                 l->fields[i].align, f->align);
            if (!align_up(end, field_align, &offset) || f->size > MOX_ABI_MAX_LAYOUT_SIZE - offset)
                return mox__fail(err, "%s: record %s exceeds the limit of %" PRIu64 " bytes", what,
                                 name, (uint64_t)MOX_ABI_MAX_LAYOUT_SIZE);
            if (l->fields[i].offset != offset)
                return mox__fail(err, "%s: " NONCANONICAL " (field %s.%s has offset %" PRIu64
                                 ", canonical %" PRIu64 ")", what, name, l->fields[i].name,
                                 l->fields[i].offset, offset);
            end = offset + f->size;
            if (field_align > max_align)
                max_align = field_align;
        }
        if (!record_canonical(l->fields, l->field_count, NULL, &size, &align))
            return mox__fail(err, "%s: record %s exceeds the limit of %" PRIu64 " bytes", what,
                             name, (uint64_t)MOX_ABI_MAX_LAYOUT_SIZE);
        if (l->size != size || l->align != align)
            return mox__fail(err, "%s: " NONCANONICAL " (record %s has size %" PRIu64
                             " and alignment %" PRIu64 ", canonical %" PRIu64 " and %" PRIu64 ")",
                             what, name, l->size, l->align, size, align);
        return true;
    }
    }
    return mox__fail(err, "%s: unknown layout kind %d", what, (int)l->kind);
}

/* The first array or record past the nesting limit, or NULL; level counts
 * the arrays and records around l. */
static const mox_abi_layout *too_deep(const mox_abi_layout *l, unsigned level)
{
    if (!l || !mox__layout_nests(l->kind))
        return NULL;
    if (level >= MOX_ABI_MAX_LAYOUT_DEPTH)
        return l;
    if (l->kind == MOX_LAYOUT_ARRAY)
        return too_deep(l->element, level + 1);
    for (size_t i = 0; l->fields && i < l->field_count; i++) {
        const mox_abi_layout *d = too_deep(l->fields[i].layout, level + 1);
        if (d)
            return d;
    }
    return NULL;
}

bool mox_abi_layout_check_depth(const mox_abi_layout *layout, const char *what,
                                mox_artifact_error *err)
{
    const mox_abi_layout *d = too_deep(layout, 0);
    if (!d)
        return true;
    bool record = d->kind == MOX_LAYOUT_RECORD;
    return mox__fail_too_deep(err, what, record ? "record" : "array", record ? d->record_name : NULL,
                              MOX_ABI_MAX_LAYOUT_DEPTH + 1);
}

bool mox__layout_check(const mox_abi_layout *layout, const char *what, mox_artifact_error *err)
{
    return mox_abi_layout_check_depth(layout, what, err) && check(layout, what, err);
}

/* ---- signature ---- */

typedef struct sbuf {
    char *data;
    size_t len, cap;
    bool failed;
} sbuf;

static void sb_add(sbuf *b, const char *text)
{
    size_t n = strlen(text);
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *data = mox__realloc(b->data, cap);
        if (!data) {
            b->failed = true;
            return;
        }
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, text, n + 1);
    b->len += n;
}

static void signature(sbuf *b, const mox_abi_layout *l, unsigned depth)
{
    char num[32];
    /* A recursion bound only: validated layouts never reach it. */
    if (!l || (mox__layout_nests(l->kind) && depth >= MOX_ABI_MAX_LAYOUT_DEPTH)) {
        b->failed = true;
        return;
    }
    switch (l->kind) {
    case MOX_LAYOUT_SCALAR:
        if ((unsigned)l->scalar >= MOX_SCALAR_COUNT_)
            b->failed = true;
        else
            sb_add(b, scalar_names[l->scalar]);
        return;
    case MOX_LAYOUT_VECTOR:
        if ((unsigned)l->scalar >= MOX_SCALAR_COUNT_) {
            b->failed = true;
        } else {
            snprintf(num, sizeof num, "%sx%" PRIu64, scalar_names[l->scalar], l->length);
            sb_add(b, num);
        }
        return;
    case MOX_LAYOUT_ARRAY:
        sb_add(b, "[");
        signature(b, l->element, depth + 1);
        snprintf(num, sizeof num, ";%" PRIu64 "]", l->length);
        sb_add(b, num);
        return;
    case MOX_LAYOUT_RECORD:
        if (!l->record_name) {
            b->failed = true;
            return;
        }
        sb_add(b, l->record_name);
        sb_add(b, "{");
        for (size_t i = 0; i < l->field_count; i++) {
            if (!l->fields[i].name) {
                b->failed = true;
                return;
            }
            if (i)
                sb_add(b, ",");
            sb_add(b, l->fields[i].name);
            if (l->fields[i].align)
                snprintf(num, sizeof num, "@%" PRIu64 "/%" PRIu64 ":", l->fields[i].offset, l->fields[i].align);
            else
                snprintf(num, sizeof num, "@%" PRIu64 ":", l->fields[i].offset);
            sb_add(b, num);
            signature(b, l->fields[i].layout, depth + 1);
        }
        sb_add(b, "}");
        return;
    }
    b->failed = true;
}

char *mox_abi_layout_signature(const mox_abi_layout *layout)
{
    sbuf b = {0};
    signature(&b, layout, 0);
    if (b.failed) {
        mox__free(b.data);
        return NULL;
    }
    return b.data;
}

/* ---- version ---- */

static bool layout_needs_v2(const mox_abi_layout *l, unsigned depth)
{
    if (!l || depth > MOX_ABI_MAX_LAYOUT_DEPTH)
        return false;
    if (l->kind == MOX_LAYOUT_VECTOR)
        return true;
    if (l->kind == MOX_LAYOUT_ARRAY)
        return layout_needs_v2(l->element, depth + 1);
    for (size_t i = 0; l->kind == MOX_LAYOUT_RECORD && i < l->field_count; i++)
        if (l->fields[i].align || layout_needs_v2(l->fields[i].layout, depth + 1))
            return true;
    return false;
}

bool mox__layout_needs_v2(const mox_abi_layout *layout)
{
    return layout_needs_v2(layout, 0);
}
