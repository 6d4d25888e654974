/* type_check.c - whether a mox_type descriptor describes a type
 * (docs/abi.md): its signature parses by the grammar of section 3 and is
 * laid out by the rules of section 2 (each record field at its canonical
 * offset, sizes within 4 GiB, at most 32 levels of arrays and records),
 * and the descriptor's size and alignment are the ones that layout has.
 * mox compares types by their signatures alone, so a descriptor whose size
 * contradicts its signature would pass every comparison and then copy the
 * wrong number of bytes; the places where a user's type enters (buffer
 * creation, value arguments, mox_type_equal) refuse it instead.
 * The parser computes sizes as it goes and allocates nothing. Record field
 * names are checked to be identifiers, not that they differ from each
 * other (the layout does not depend on them). */
#include "type_check.h"

#include <stdio.h>
#include <string.h>

#include "artifact/abi.h"

typedef struct sig_parser {
    const char *text; /* the whole signature */
    const char *p;    /* the next character */
    char *why;
    size_t why_size;
} sig_parser;

typedef struct sig_shape {
    uint64_t size, align;
} sig_shape;

static bool fail_at(sig_parser *s, const char *what)
{
    snprintf(s->why, s->why_size, "%s at character %zu", what, (size_t)(s->p - s->text) + 1);
    return false;
}

static bool expect(sig_parser *s, char c, const char *what)
{
    if (*s->p != c)
        return fail_at(s, what);
    s->p++;
    return true;
}

static bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* count = "0" | nonzero-digit { digit }, at most MOX_ABI_MAX_LAYOUT_SIZE. */
static bool parse_count(sig_parser *s, uint64_t *out)
{
    if (!is_digit(*s->p))
        return fail_at(s, "expected a number");
    if (s->p[0] == '0' && is_digit(s->p[1]))
        return fail_at(s, "a number with a leading zero");
    uint64_t v = 0;
    for (; is_digit(*s->p); s->p++) {
        v = v * 10 + (uint64_t)(*s->p - '0');
        if (v > MOX_ABI_MAX_LAYOUT_SIZE)
            return fail_at(s, "a number past the 4 GiB limit");
    }
    *out = v;
    return true;
}

/* An identifier's length (0 when there is none here). */
static size_t ident_length(const char *p)
{
    size_t n = 0;
    if (is_ident_start(p[0]))
        for (n = 1; is_ident_start(p[n]) || is_digit(p[n]); n++)
            ;
    return n;
}

static bool align_up(uint64_t v, uint64_t align, uint64_t *out)
{
    *out = (v + align - 1) & ~(align - 1); /* v and align are below 2^33: no overflow */
    return *out <= MOX_ABI_MAX_LAYOUT_SIZE;
}

static bool parse(sig_parser *s, unsigned depth, sig_shape *out);

/* A scalar or vector named by the `n` characters at s->p. */
static bool scalar_or_vector(sig_parser *s, size_t n, sig_shape *out)
{
    static const struct {
        const char *name;
        uint32_t size;
        unsigned max_lanes; /* vectors of 2..max_lanes lanes (docs/abi.md) */
    } scalars[] = {{"f32", 4, 4}, {"f16", 2, 2}, {"u32", 4, 4}, {"i32", 4, 4},
                   {"u16", 2, 0}, {"i16", 2, 0}, {"u8", 1, 0},  {"i8", 1, 0}};
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        size_t len = strlen(scalars[i].name);
        if (n < len || strncmp(s->p, scalars[i].name, len) != 0)
            continue;
        uint64_t lanes = 1;
        if (n == len + 2 && s->p[len] == 'x' && s->p[len + 1] >= '2' && s->p[len + 1] <= '4')
            lanes = (uint64_t)(s->p[len + 1] - '0');
        else if (n != len)
            continue;
        if (lanes > 1 && lanes > scalars[i].max_lanes)
            return fail_at(s, "a vector type that does not exist");
        out->size = scalars[i].size * lanes;
        out->align = lanes == 3 ? scalars[i].size : out->size;
        s->p += n;
        return true;
    }
    return fail_at(s, "an unknown scalar type");
}

/* A failure of the field that starts at `field`: reported at its name. */
static bool field_fail(sig_parser *s, const char *field, const char *what)
{
    s->p = field;
    return fail_at(s, what);
}

/* One field of a record: name "@" offset ["/" alignment] ":" type, placed
 * after `*end` (updated) and raising `*max_align`. */
static bool record_field(sig_parser *s, unsigned depth, uint64_t *end, uint64_t *max_align)
{
    const char *field = s->p;
    size_t n = ident_length(s->p);
    if (n == 0)
        return fail_at(s, "expected a field name");
    s->p += n;
    uint64_t offset, explicit_align = 0, at;
    if (!expect(s, '@', "expected '@' after a field name") || !parse_count(s, &offset))
        return false;
    bool aligned = *s->p == '/';
    if (aligned && (s->p++, !parse_count(s, &explicit_align)))
        return false;
    sig_shape f;
    if (!expect(s, ':', "expected ':' before a field's type") || !parse(s, depth, &f))
        return false;
    if (aligned && ((explicit_align & (explicit_align - 1)) != 0 || explicit_align <= f.align))
        return field_fail(s, field, "a field alignment that is not a power of two above its type's");
    uint64_t field_align = aligned ? explicit_align : f.align;
    if (!align_up(*end, field_align, &at) || f.size > MOX_ABI_MAX_LAYOUT_SIZE - at)
        return field_fail(s, field, "a record past the 4 GiB limit");
    if (at != offset) {
        char what[96];
        snprintf(what, sizeof what, "a field at offset %llu where the layout rules place it at %llu",
                 (unsigned long long)offset, (unsigned long long)at);
        return field_fail(s, field, what);
    }
    *end = at + f.size;
    if (field_align > *max_align)
        *max_align = field_align;
    return true;
}

/* field { "," field } "}" of a record, after its "{". */
static bool record_fields(sig_parser *s, unsigned depth, sig_shape *out)
{
    uint64_t end = 0, max_align = 1;
    if (!record_field(s, depth, &end, &max_align))
        return false;
    while (*s->p == ',') {
        s->p++;
        if (!record_field(s, depth, &end, &max_align))
            return false;
    }
    if (!expect(s, '}', "expected ',' or '}' after a field"))
        return false;
    out->align = max_align;
    if (!align_up(end, max_align, &out->size))
        return fail_at(s, "a record past the 4 GiB limit");
    return true;
}

static bool parse(sig_parser *s, unsigned depth, sig_shape *out)
{
    if (*s->p == '[' || (ident_length(s->p) && s->p[ident_length(s->p)] == '{')) {
        if (depth >= MOX_ABI_MAX_LAYOUT_DEPTH)
            return fail_at(s, "arrays and records nested more than 32 levels deep");
        depth++;
    }
    if (*s->p == '[') {
        s->p++;
        sig_shape e;
        uint64_t count;
        if (!parse(s, depth, &e) || !expect(s, ';', "expected ';' after an array's element type") ||
            !parse_count(s, &count))
            return false;
        if (count == 0)
            return fail_at(s, "an array of 0 elements");
        if (e.size > MOX_ABI_MAX_LAYOUT_SIZE / count)
            return fail_at(s, "an array past the 4 GiB limit");
        out->size = e.size * count;
        out->align = e.align;
        return expect(s, ']', "expected ']' after an array's length");
    }
    size_t n = ident_length(s->p);
    if (n == 0)
        return fail_at(s, "expected a type");
    if (s->p[n] != '{')
        return scalar_or_vector(s, n, out);
    char name[64] = "";
    if (n < sizeof name)
        memcpy(name, s->p, n);
    if (mox_abi_is_reserved_name(name))
        return fail_at(s, "a record named by a reserved word");
    s->p += n + 1;
    return record_fields(s, depth, out);
}

static const mox_type *const builtins[] = {
    &mox_type_f32,   &mox_type_f16,   &mox_type_u32,   &mox_type_i32,   &mox_type_u16,   &mox_type_i16,
    &mox_type_u8,    &mox_type_i8,    &mox_type_f32x2, &mox_type_f32x3, &mox_type_f32x4, &mox_type_i32x2,
    &mox_type_i32x3, &mox_type_i32x4, &mox_type_u32x2, &mox_type_u32x3, &mox_type_u32x4, &mox_type_f16x2,
};

bool mox__type_check(const mox_type *type, char *why, size_t why_size)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (type == builtins[i])
            return true;
    if (!type->signature) {
        snprintf(why, why_size, "it has no signature");
        return false;
    }
    char detail[160];
    sig_parser s = {type->signature, type->signature, detail, sizeof detail};
    sig_shape shape;
    if (!parse(&s, 0, &shape) || (*s.p && !fail_at(&s, "text after the type"))) {
        snprintf(why, why_size, "'%s' is not a type signature (%s; docs/abi.md)", type->signature, detail);
        return false;
    }
    if (type->size != shape.size) {
        snprintf(why, why_size, "its size is %u bytes, but its signature %s has size %llu (docs/abi.md)",
                 type->size, type->signature, (unsigned long long)shape.size);
        return false;
    }
    if (type->align != shape.align) {
        snprintf(why, why_size, "its alignment is %u, but its signature %s has alignment %llu (docs/abi.md)",
                 type->align, type->signature, (unsigned long long)shape.align);
        return false;
    }
    return true;
}
