/* gen_text.c - text building shared by moxc's generators: a growable buffer,
 * C string literal escaping, C declarations of ABI layouts, and the checks
 * of what the generators assume of a module. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "sha256.h"

static bool buf_reserve(moxc_buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (extra > SIZE_MAX - b->len - 1) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *data = realloc(b->data, cap);
    if (!data) {
        b->failed = true;
        return false;
    }
    b->data = data;
    b->cap = cap;
    return true;
}

void moxc_buf_write(moxc_buf *b, const void *data, size_t size)
{
    if (!buf_reserve(b, size))
        return;
    if (size)
        memcpy(b->data + b->len, data, size);
    b->len += size;
    b->data[b->len] = '\0';
}

void moxc_buf_put(moxc_buf *b, const char *text)
{
    moxc_buf_write(b, text, strlen(text));
}

void moxc_buf_printf(moxc_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (!buf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *moxc_buf_finish(moxc_buf *b)
{
    if (!b->failed && !b->data && buf_reserve(b, 0))
        b->data[0] = '\0';
    if (b->failed) {
        free(b->data);
        *b = (moxc_buf){0};
        return NULL;
    }
    char *text = b->data;
    *b = (moxc_buf){0};
    return text;
}

void moxc_buf_put_c_string(moxc_buf *b, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; ++p) {
        /* '?' is escaped so that no trigraph can form under -std=c11. */
        if (*p == '"' || *p == '\\' || *p == '?') {
            char esc[3] = {'\\', (char)*p, '\0'};
            moxc_buf_put(b, esc);
        } else if (*p < 0x20 || *p > 0x7e) {
            /* Octal takes at most 3 digits, so a following digit cannot
             * extend the escape (hex escapes would swallow it). */
            moxc_buf_printf(b, "\\%03o", (unsigned)*p);
        } else {
            moxc_buf_write(b, p, 1);
        }
    }
}

const char *moxc_scalar_c_type(mox_scalar scalar, moxc_side side)
{
    switch (scalar) {
    case MOX_SCALAR_F32: return "float";
    case MOX_SCALAR_F16: return side == MOXC_HOST ? "uint16_t" : "mox_f16";
    case MOX_SCALAR_U32: return "uint32_t";
    case MOX_SCALAR_I32: return "int32_t";
    case MOX_SCALAR_U16: return "uint16_t";
    case MOX_SCALAR_I16: return "int16_t";
    case MOX_SCALAR_U8: return "uint8_t";
    case MOX_SCALAR_I8: return "int8_t";
    case MOX_SCALAR_COUNT_: break;
    }
    return "void";
}

const char *moxc_vector_c_type(mox_scalar lane, uint64_t lanes)
{
    static const char *const names[4][3] = {
        {"mox_float2", "mox_float3", "mox_float4"},
        {"mox_int2", "mox_int3", "mox_int4"},
        {"mox_uint2", "mox_uint3", "mox_uint4"},
        {"mox_half2", NULL, NULL},
    };
    int row = lane == MOX_SCALAR_F32 ? 0 : lane == MOX_SCALAR_I32 ? 1 : lane == MOX_SCALAR_U32 ? 2
            : lane == MOX_SCALAR_F16 ? 3 : -1;
    if (row < 0 || lanes < 2 || lanes > 4 || !names[row][lanes - 2])
        return "void";
    return names[row][lanes - 2];
}

const moxc_record *moxc_find_record(const moxc_module *module, const char *name)
{
    for (size_t i = 0; i < module->record_count; ++i)
        if (strcmp(module->records[i].name, name) == 0)
            return &module->records[i];
    return NULL;
}

void moxc_put_decl(moxc_buf *b, const moxc_module *module, const mox_abi_layout *layout,
                   const char *spelling, moxc_side side, const char *qualifier, const char *inner)
{
    /* Peel arrays: T x[a][b] is array a of array b of T. */
    const mox_abi_layout *base = layout;
    while (base->kind == MOX_LAYOUT_ARRAY)
        base = base->element;
    const char *name = spelling;
    if (!name || layout->kind == MOX_LAYOUT_ARRAY) {
        if (base->kind == MOX_LAYOUT_SCALAR) {
            name = moxc_scalar_c_type(base->scalar, side);
        } else if (base->kind == MOX_LAYOUT_VECTOR) {
            name = moxc_vector_c_type(base->scalar, base->length);
        } else {
            const moxc_record *r = moxc_find_record(module, base->record_name);
            name = r ? r->c_spelling : base->record_name;
        }
    }
    moxc_buf_printf(b, "%s%s", qualifier, name);
    if (layout->kind != MOX_LAYOUT_ARRAY) {
        moxc_buf_printf(b, "%s%s", inner[0] ? " " : "", inner);
        return;
    }
    if (inner[0] == '*')
        moxc_buf_printf(b, " (%s)", inner);
    else
        moxc_buf_printf(b, "%s%s", inner[0] ? " " : "", inner);
    for (const mox_abi_layout *a = layout; a->kind == MOX_LAYOUT_ARRAY; a = a->element)
        moxc_buf_printf(b, "[%llu]", (unsigned long long)a->length);
}

static const mox_abi_layout *find_in_layout(const mox_abi_layout *l, const char *name)
{
    if (l->kind == MOX_LAYOUT_ARRAY)
        return find_in_layout(l->element, name);
    if (l->kind != MOX_LAYOUT_RECORD)
        return NULL;
    if (strcmp(l->record_name, name) == 0)
        return l;
    for (size_t i = 0; i < l->field_count; ++i) {
        const mox_abi_layout *found = find_in_layout(l->fields[i].layout, name);
        if (found)
            return found;
    }
    return NULL;
}

const mox_abi_layout *moxc_find_record_layout(const mox_abi *abi, const char *name)
{
    for (size_t k = 0; k < abi->kernel_count; ++k)
        for (size_t p = 0; p < abi->kernels[k].param_count; ++p) {
            const mox_abi_layout *found = find_in_layout(abi->kernels[k].params[p].layout, name);
            if (found)
                return found;
        }
    return NULL;
}

static bool is_identifier(const char *s)
{
    if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
        return false;
    for (++s; *s; ++s)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

/* #include "..." takes no escapes: such a path cannot be spelled there. */
static bool includable_path(const char *path)
{
    if (!path || path[0] != '/')
        return false;
    for (const unsigned char *p = (const unsigned char *)path; *p; ++p)
        if (*p == '"' || *p == '\\' || *p < 0x20 || *p == 0x7f)
            return false;
    return true;
}

static bool check_layout_records(const moxc_module *module, const mox_abi_layout *l, FILE *diag)
{
    if (l->kind == MOX_LAYOUT_ARRAY)
        return check_layout_records(module, l->element, diag);
    if (l->kind != MOX_LAYOUT_RECORD)
        return true;
    if (!moxc_find_record(module, l->record_name)) {
        fprintf(diag, "moxc: record %s is used by the ABI but the front end did not describe it\n",
                l->record_name);
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < l->field_count; ++i)
        ok = check_layout_records(module, l->fields[i].layout, diag) && ok;
    return ok;
}

bool moxc_is_module_name(const char *name)
{
    return is_identifier(name) && strlen(name) <= 200;
}

bool moxc_gen_check(const moxc_module *module, const char *name, FILE *diag)
{
    bool ok = true;
    if (!moxc_is_module_name(name)) {
        fprintf(diag, "moxc: module name '%s' is not a C identifier (of at most 200 characters)\n",
                name ? name : "");
        ok = false;
    }
    for (size_t i = 0; i < module->record_count; ++i) {
        const moxc_record *r = &module->records[i];
        if (!includable_path(r->header)) {
            fprintf(diag, "moxc: record %s must be declared in a header with a plain absolute path\n",
                    r->name);
            ok = false;
        }
        if (!is_identifier(r->name) || !moxc_find_record_layout(module->abi, r->name)) {
            fprintf(diag, "moxc: record %s is not used by the ABI\n", r->name);
            ok = false;
        }
    }
    for (size_t i = 0; i < module->edit_count; ++i)
        if (!includable_path(module->edits[i].path)) {
            fprintf(diag, "moxc: kernel source path cannot be included: %s\n", module->edits[i].path);
            ok = false;
        }
    for (size_t k = 0; k < module->abi->kernel_count; ++k) {
        const mox_abi_kernel *kernel = &module->abi->kernels[k];
        for (size_t p = 0; p < kernel->param_count; ++p) {
            const mox_abi_param *param = &kernel->params[p];
            if (param->kind == MOX_PARAM_VALUE && param->layout->kind == MOX_LAYOUT_ARRAY) {
                fprintf(diag, "moxc: kernel %s parameter %s: array values cannot be passed by value in C\n",
                        kernel->name, param->name);
                ok = false;
            }
            ok = check_layout_records(module, param->layout, diag) && ok;
        }
    }
    return ok;
}

bool moxc_gen_abi(const moxc_module *module, char **json, char sha256[65])
{
    *json = mox_abi_to_json(module->abi);
    if (!*json)
        return false;
    if (!mox_sha256_hex(*json, strlen(*json), sha256)) {
        free(*json);
        *json = NULL;
        return false;
    }
    return true;
}
