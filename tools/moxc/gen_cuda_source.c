/* gen_cuda_source.c - the kernel sources as kernels_cuda.cu pastes them:
 * "__device__ " inserted where the front end said (functions and
 * file-scope constants; not before MOX_KERNEL or MOX_DEVICE, which are
 * __device__ under nvcc already), and after each kernel whose gate check
 * can be deferred (moxc_gate_defer) its deferred copy, under #line
 * directives that keep the user's file and line numbers. Without such
 * kernels the text is what it always was. */
#include <ctype.h>
#include <string.h>

#include "gen.h"

/* Whether the declaration at `at` already starts with a dialect macro that
 * is __device__ under nvcc (MOX_KERNEL, MOX_DEVICE): adding another would
 * put the attribute twice on the function, which nvcc's messages show. */
static bool starts_device_macro(const moxc_source_text *text, size_t at)
{
    static const char *const macros[] = {"MOX_KERNEL", "MOX_DEVICE"};
    for (size_t i = 0; i < sizeof macros / sizeof macros[0]; ++i) {
        size_t n = strlen(macros[i]);
        if (text->size - at < n || memcmp(text->data + at, macros[i], n) != 0)
            continue;
        unsigned char next = text->size - at > n ? (unsigned char)text->data[at + n] : ' ';
        if (next != '_' && !isalnum(next))
            return true;
    }
    return false;
}

/* Bytes [from, to) of the source with "__device__ " before each of the
 * edit's offsets in [from, to) (and at `to` too when `to_inclusive`) and
 * the text edits `changes` (ascending, inside [from, to)) applied. */
static void put_range(moxc_buf *b, const moxc_source_edit *edit, const moxc_source_text *text, size_t from,
                      size_t to, bool to_inclusive, const moxc_text_edit *changes, size_t change_count)
{
    size_t pos = from, c = 0;
    for (size_t i = 0; i < edit->offset_count; ++i) {
        size_t at = edit->offsets[i];
        if (at < from || at > to || (at == to && !to_inclusive))
            continue;
        for (; c < change_count && changes[c].at < at; ++c) {
            moxc_buf_write(b, text->data + pos, changes[c].at - pos);
            moxc_buf_put(b, changes[c].text);
            pos = changes[c].at + changes[c].skip;
        }
        moxc_buf_write(b, text->data + pos, at - pos);
        if (!starts_device_macro(text, at))
            moxc_buf_put(b, "__device__ ");
        pos = at;
    }
    for (; c < change_count; ++c) {
        moxc_buf_write(b, text->data + pos, changes[c].at - pos);
        moxc_buf_put(b, changes[c].text);
        pos = changes[c].at + changes[c].skip;
    }
    moxc_buf_write(b, text->data + pos, to - pos);
}

static void put_line(moxc_buf *b, unsigned line, const char *path)
{
    moxc_buf_printf(b, "#line %u \"", line);
    moxc_buf_put_c_string(b, path);
    moxc_buf_put(b, "\"\n");
}

/* Whether a kernel's deferred copy fits the text: inside it, after `pos`,
 * its changes ascending, inside the definition and not overlapping. */
static bool copy_fits(const moxc_gate_defer *gate, const moxc_source_text *text, size_t pos)
{
    if (gate->start < pos || gate->end <= gate->start || gate->end > text->size)
        return false;
    size_t at = gate->start;
    for (size_t i = 0; i < gate->edit_count; ++i) {
        const moxc_text_edit *e = &gate->edits[i];
        if (e->at < at || e->skip > gate->end - e->at || !e->text)
            return false;
        at = e->at + e->skip;
    }
    return true;
}

static void put_copy(moxc_buf *b, const char *kernel, const moxc_source_edit *edit, const moxc_source_text *text,
                     const moxc_gate_defer *gate)
{
    moxc_buf_printf(b, "\n/* %s with the gate checked after its loads: the copy the gated entries run\n"
                       " * (moxc inspect --emit gate). */\n",
                    kernel);
    put_line(b, gate->start_line, edit->path);
    put_range(b, edit, text, gate->start, gate->end, false, gate->edits, gate->edit_count);
    moxc_buf_put(b, "\n");
    put_line(b, gate->end_line, edit->path);
}

bool moxc_gen_cuda_put_source(moxc_buf *b, const moxc_module *module, const moxc_source_edit *edit,
                              const moxc_source_text *text)
{
    /* #line makes nvcc's diagnostics name the user's file and line; the
     * insertions add no newline, so line numbers stay the user's. */
    put_line(b, 1, edit->path);
    size_t last = 0;
    for (size_t i = 0; i < edit->offset_count; ++i) {
        if (edit->offsets[i] < last || edit->offsets[i] > text->size)
            return false;
        last = edit->offsets[i];
    }
    size_t pos = 0;
    for (size_t k = 0; module->kernels && k < module->abi->kernel_count; ++k) {
        const moxc_kernel_info *info = &module->kernels[k];
        if (!moxc_gate_defer_on(module, k) || !info->file || strcmp(info->file, edit->path) != 0)
            continue;
        if (!copy_fits(&info->gate, text, pos))
            return false;
        put_range(b, edit, text, pos, info->gate.end, false, NULL, 0);
        put_copy(b, module->abi->kernels[k].name, edit, text, &info->gate);
        pos = info->gate.end;
    }
    put_range(b, edit, text, pos, text->size, true, NULL, 0);
    if (text->size == 0 || text->data[text->size - 1] != '\n')
        moxc_buf_put(b, "\n");
    return true;
}
