/* parse_record.c - records (C structs) as element types of kernel
 * parameters (scalars: parse_scalar.c). A record's layout is read from clang
 * and must equal the canonical layout of src/artifact
 * (mox_abi_layout_record), because the host compiler, nvcc and the runtime
 * all have to agree on it byte for byte. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf, realpath */
#endif
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

typedef struct field_list {
    CXCursor *items;
    size_t count, cap;
    bool failed;
} field_list;

static enum CXVisitorResult collect_field(CXCursor c, CXClientData data) {
    field_list *fl = data;
    if (!moxc__grow(&fl->items, &fl->cap, fl->count + 1, sizeof(CXCursor))) {
        fl->failed = true;
        return CXVisit_Break;
    }
    fl->items[fl->count++] = c;
    return CXVisit_Continue;
}

/* Whether a declaration was written in one of the kernel sources rather than a header. */
static bool declared_in_source(moxc__tu *t, CXCursor decl) {
    CXFile file;
    moxc__expansion(moxc__cursor_loc(decl), &file, NULL, NULL, NULL);
    if (!file)
        return true;
    if (t->main_file && clang_File_isEqual(file, t->main_file))
        return true;
    char *real = moxc__file_real(file);
    bool in = false;
    for (size_t i = 0; real && i < t->front->opts->source_count; i++)
        if (t->front->source_real[i] && strcmp(t->front->source_real[i], real) == 0)
            in = true;
    free(real);
    return in;
}

static mox_abi_layout *member_layout(moxc__tu *t, CXType ft, const char *record, CXCursor field,
                                     const char *kernel) {
    moxc__front *f = t->front;
    CXSourceLocation loc = moxc__cursor_loc(field);
    char *fname = moxc__cxstr(clang_getCursorSpelling(field));
    CXType c = clang_getCanonicalType(ft);
    mox_abi_layout *result = NULL;
    if (c.kind == CXType_ConstantArray) {
        mox_abi_layout *elem = member_layout(t, clang_getArrayElementType(ft), record, field, kernel);
        long long n = clang_getArraySize(c);
        if (elem && n > 0) {
            result = mox_abi_layout_array(elem, (uint64_t)n);
            if (!result)
                moxc__error_at(f, loc, "record '%s' member '%s': array is too large", record, fname);
        } else if (elem) {
            mox_abi_layout_free(elem);
            moxc__error_at(f, loc, "record '%s' member '%s': zero-length arrays are not supported",
                           record, fname);
        }
    } else if (c.kind == CXType_IncompleteArray) {
        moxc__error_at(f, loc, "record '%s' has a flexible array member '%s'; records must have a fixed size",
                       record, fname);
    } else if (c.kind == CXType_Pointer) {
        moxc__error_at(f, loc,
                       "record '%s' has a pointer member '%s'; pointers cannot be passed inside records",
                       record, fname);
    } else if (moxc__vector_of(c, NULL, NULL)) {
        mox_scalar lane;
        unsigned lanes;
        moxc__vector_of(c, &lane, &lanes);
        result = mox_abi_layout_vector(lane, lanes);
    } else if (c.kind == CXType_Record && !moxc__is_f16(c)) {
        CXCursor decl = clang_getTypeDeclaration(c);
        if (clang_getCursorKind(decl) == CXCursor_UnionDecl)
            moxc__error_at(f, loc, "record '%s' has a union member '%s'; unions are not supported",
                           record, fname);
        else if (moxc__is_atomic(c, NULL))
            moxc__error_at(f, loc,
                           "record '%s' has an atomic member '%s'; atomics are only supported as buffers",
                           record, fname);
        else
            result = moxc__record_layout(t, ft, kernel, loc);
    } else {
        mox_scalar s;
        char *why = NULL;
        if (moxc__scalar_of(c, &s, &why)) {
            result = mox_abi_layout_scalar(s);
        } else {
            char *ts = moxc__cxstr(clang_getTypeSpelling(ft));
            moxc__error_at(f, loc, "record '%s' member '%s' has unsupported type '%s'%s%s", record,
                           fname, ts ? ts : "?", why ? ": " : "", why ? why : "");
            free(ts);
        }
        free(why);
    }
    free(fname);
    return result;
}

/* Compares clang's layout of `type` with the canonical one; errors say where. */
static bool check_canonical(moxc__tu *t, CXType type, const mox_abi_layout *layout,
                            const field_list *fl, CXCursor decl, const char *name) {
    moxc__front *f = t->front;
    for (size_t i = 0; i < fl->count && i < layout->field_count; i++) {
        long long bits = clang_Cursor_getOffsetOfField(fl->items[i]);
        if (bits < 0 || (uint64_t)bits != layout->fields[i].offset * 8) {
            moxc__error_at(f, moxc__cursor_loc(fl->items[i]),
                           "record '%s' is not canonical: member '%s' is at offset %lld, the canonical offset is %llu (packed or aligned attributes?)",
                           name, layout->fields[i].name, bits < 0 ? bits : bits / 8,
                           (unsigned long long)layout->fields[i].offset);
            return false;
        }
    }
    long long size = clang_Type_getSizeOf(type), align = clang_Type_getAlignOf(type);
    if (size < 0 || (uint64_t)size != layout->size) {
        moxc__error_at(f, moxc__cursor_loc(decl),
                       "record '%s' is not canonical: its size is %lld, the canonical size is %llu (packed or aligned attributes?)",
                       name, size, (unsigned long long)layout->size);
        return false;
    }
    if (align < 0 || (uint64_t)align != layout->align) {
        moxc__error_at(f, moxc__cursor_loc(decl),
                       "record '%s' is not canonical: its alignment is %lld, the canonical alignment is %llu (packed or aligned attributes?)",
                       name, align, (unsigned long long)layout->align);
        return false;
    }
    return true;
}

static enum CXChildVisitResult find_aligned(CXCursor c, CXCursor parent, CXClientData data) {
    (void)parent;
    if (clang_getCursorKind(c) == CXCursor_AlignedAttr) {
        *(bool *)data = true;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

static bool has_aligned_attr(CXCursor field) {
    bool found = false;
    clang_visitChildren(field, find_aligned, &found);
    return found;
}

/* Members declared with _Alignas (or aligned(N)) get the alignment that
 * reproduces clang's layout: the smallest power of two above the type's
 * own that puts the member at clang's offset, and the record's alignment
 * on the first such member it fits when the offsets alone do not show it.
 * The canonical check afterwards proves the result equals clang's layout;
 * the generated _Static_asserts prove the host compiler agrees. */
static void infer_field_aligns(CXType canon, const field_list *fl, mox_abi_field *fields) {
    uint64_t end = 0, max_align = 1;
    for (size_t i = 0; i < fl->count; i++) {
        long long bits = clang_Cursor_getOffsetOfField(fl->items[i]);
        const mox_abi_layout *l = fields[i].layout;
        if (bits < 0 || !l)
            return;
        uint64_t offset = (uint64_t)bits / 8, align = l->align;
        if (has_aligned_attr(fl->items[i])) {
            for (uint64_t p = l->align; p <= ((uint64_t)1 << 32); p <<= 1)
                if (((end + p - 1) & ~(p - 1)) == offset) {
                    align = p;
                    break;
                }
        }
        fields[i].align = align > l->align ? align : 0;
        end = offset + l->size;
        max_align = align > max_align ? align : max_align;
    }
    long long record_align = clang_Type_getAlignOf(canon);
    if (record_align <= 0 || (uint64_t)record_align <= max_align)
        return;
    for (size_t i = 0; i < fl->count; i++) {
        uint64_t offset = (uint64_t)clang_Cursor_getOffsetOfField(fl->items[i]) / 8;
        if (has_aligned_attr(fl->items[i]) && offset % (uint64_t)record_align == 0) {
            fields[i].align = (uint64_t)record_align > fields[i].layout->align ? (uint64_t)record_align : 0;
            return;
        }
    }
}

static mox_abi_layout *build_record(moxc__tu *t, CXType canon, CXCursor decl, const char *name,
                                    const char *kernel) {
    moxc__front *f = t->front;
    field_list fl = {NULL, 0, 0, false};
    clang_Type_visitFields(canon, collect_field, &fl);
    if (fl.failed) {
        moxc__error_at(f, moxc__cursor_loc(decl), "out of memory");
        free(fl.items);
        return NULL;
    }
    if (fl.count == 0) {
        moxc__error_at(f, moxc__cursor_loc(decl), "record '%s' has no fields", name);
        free(fl.items);
        return NULL;
    }
    mox_abi_field *fields = calloc(fl.count, sizeof *fields);
    bool ok = fields != NULL;
    /* Every member is looked at, so each problem is reported at once. */
    for (size_t i = 0; fields && i < fl.count; i++) {
        CXCursor fc = fl.items[i];
        char *fname = moxc__cxstr(clang_getCursorSpelling(fc));
        if (!fname || !fname[0]) {
            moxc__error_at(f, moxc__cursor_loc(fc),
                           "record '%s' has an anonymous member; give every member a name", name);
            ok = false;
        } else if (moxc__is_reserved_name(fname)) {
            moxc__keyword_error_at(f, moxc__cursor_loc(fc),
                           "record '%s' member '%s' is a C++ keyword; the CUDA translation unit is C++",
                           name, fname);
            ok = false;
        } else if (clang_Cursor_isBitField(fc)) {
            moxc__error_at(f, moxc__cursor_loc(fc),
                           "record '%s' has a bit-field '%s'; bit-fields are not supported", name,
                           fname);
            ok = false;
        } else {
            fields[i].layout = member_layout(t, clang_getCursorType(fc), name, fc, kernel);
            ok = fields[i].layout != NULL && ok;
        }
        fields[i].name = fname;
    }
    mox_abi_layout *layout = NULL;
    if (ok) {
        infer_field_aligns(canon, &fl, fields);
        layout = mox_abi_layout_record(name, fields, fl.count);
        fields = NULL; /* taken over */
        if (!layout)
            moxc__error_at(f, moxc__cursor_loc(decl), "record '%s' is too large", name);
        else if (!check_canonical(t, canon, layout, &fl, decl, name)) {
            mox_abi_layout_free(layout);
            layout = NULL;
        }
    }
    if (fields) {
        for (size_t i = 0; i < fl.count; i++) {
            free(fields[i].name);
            mox_abi_layout_free(fields[i].layout);
        }
        free(fields);
    }
    free(fl.items);
    return layout;
}

/* Records the record once per name; a second, different layout is an error. */
static void register_record(moxc__tu *t, const char *name, const char *spelling, CXCursor header_decl,
                            const mox_abi_layout *layout) {
    moxc__front *f = t->front;
    for (size_t i = 0; i < f->record_count; i++) {
        if (strcmp(f->records[i].pub.name, name) != 0)
            continue;
        if (!mox_abi_layout_equal(f->records[i].layout, layout))
            moxc__error_at(f, moxc__cursor_loc(header_decl),
                           "record '%s' has a different layout here than in %s", name,
                           f->records[i].pub.header);
        return;
    }
    if (!moxc__grow(&f->records, &f->record_cap, f->record_count + 1, sizeof *f->records)) {
        moxc__error_at(f, moxc__cursor_loc(header_decl), "out of memory");
        return;
    }
    CXFile file;
    moxc__expansion(moxc__cursor_loc(header_decl), &file, NULL, NULL, NULL);
    moxc__record *r = &f->records[f->record_count];
    r->pub.name = moxc__strdup(name);
    r->pub.c_spelling = moxc__strdup(spelling);
    r->pub.header = file ? moxc__file_real(file) : NULL;
    r->layout = mox_abi_layout_clone(layout);
    f->record_count++;
    if (!r->pub.name || !r->pub.c_spelling || !r->pub.header || !r->layout)
        moxc__error_at(f, moxc__cursor_loc(header_decl), "out of memory");
}

mox_abi_layout *moxc__record_layout(moxc__tu *t, CXType spelled, const char *kernel,
                                    CXSourceLocation use) {
    moxc__front *f = t->front;
    CXType s = moxc__strip_elaborated(spelled);
    CXType canon = clang_getCanonicalType(spelled);
    CXCursor def = clang_getCursorDefinition(clang_getTypeDeclaration(canon));
    if (clang_Cursor_isNull(def)) {
        char *ts = moxc__cxstr(clang_getTypeSpelling(spelled));
        const char *shown = ts ? ts : "?";
        /* the record, not the parameter's qualifiers: 'const struct s' is 'struct s' */
        while (moxc__starts_with(shown, "const ") || moxc__starts_with(shown, "volatile "))
            shown = strchr(shown, ' ') + 1;
        moxc__error_at(f, use, "record '%s' is incomplete (no definition visible)", shown);
        free(ts);
        return NULL;
    }
    char *name = NULL, *spelling = NULL;
    CXCursor header_decl = def;
    if (s.kind == CXType_Typedef) {
        name = moxc__cxstr(clang_getTypedefName(s));
        spelling = moxc__strdup(name ? name : "");
        header_decl = clang_getTypeDeclaration(s);
    } else {
        char *tag = moxc__cxstr(clang_getCursorSpelling(def));
        if (!tag || !tag[0] || clang_Cursor_isAnonymous(def) || strchr(tag, ' ')) {
            moxc__error_at(f, use,
                           "a record used by kernel '%s' has no name; give the struct a tag or a typedef",
                           kernel);
            free(tag);
            return NULL;
        }
        name = tag;
        spelling = moxc__printf("struct %s", tag);
    }
    mox_abi_layout *layout = NULL;
    if (!name || !spelling) {
        moxc__error_at(f, use, "out of memory");
    } else if (moxc__is_reserved_name(name)) {
        moxc__keyword_error_at(f, moxc__cursor_loc(header_decl),
                       "record name '%s' is a C++ keyword; the CUDA translation unit is C++", name);
    } else if (moxc__is_cuda_type_name(name)) {
        const char *hint = moxc__cuda_hint(name);
        moxc__error_at(f, moxc__cursor_loc(header_decl),
                       "record name '%s' is a CUDA built-in type, which CUDA's headers define in the CUDA "
                       "translation unit; rename it%s%s%s",
                       name, hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
    } else if (declared_in_source(t, header_decl) || declared_in_source(t, def)) {
        moxc__error_at(f, moxc__cursor_loc(declared_in_source(t, header_decl) ? header_decl : def),
                       "record '%s' used by kernel '%s' must be declared in a header", name, kernel);
    } else {
        layout = build_record(t, canon, def, name, kernel);
        if (layout)
            register_record(t, name, spelling, header_decl, layout);
    }
    free(name);
    free(spelling);
    return layout;
}
