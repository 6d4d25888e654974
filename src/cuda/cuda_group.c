/* src/cuda/cuda_group.c - a launch's group: its memory, its completion
 * order (the groups it completes after) and the reader counts it holds on
 * earlier launches' instances. */
#include "cuda/cuda_internal.h"

#include <stddef.h>
#include <string.h>

/* Zeroed blocks per launch (counts are small): malloc + memset, as glibc's
 * calloc bypasses the per-thread cache (src/core/alloc.c); the asm hides p's
 * origin, or GCC fuses the pair back into calloc. */
static void *zalloc(size_t count, size_t size)
{
    void *p = mox__malloc(count * size);
    __asm__("" : "+r"(p));
    if (p)
        memset(p, 0, count * size);
    return p;
}

/* A launch's group comes from the per-thread block cache (alloc.h): one
 * per launch, so a launch + wait round trip would otherwise pay malloc and
 * free each time. Its fields are zeroed with unrolled stores (no memset
 * call); a merged launch's executions and the group's first successors
 * fit its inline room (no array made and freed per launch). */
mox__cuda_group *mox__cuda_group_new(uint32_t nsubs)
{
    mox__cuda_group *g = mox__block_alloc(sizeof *g);
    if (!g)
        return NULL;
    mox__zero_fixed(g, offsetof(mox__cuda_group, subs_inline));
    g->subs = nsubs <= MOX__CUDA_MERGE_SUBS ? g->subs_inline : zalloc(nsubs, sizeof *g->subs);
    if (!g->subs) {
        mox__block_free(g, sizeof *g);
        return NULL;
    }
    return g;
}

void mox__cuda_group_free(mox__cuda_group *g)
{
    if (g->subs != g->subs_inline)
        mox__free(g->subs);
    /* A lone launch often has none of these: one test, not five calls. */
    mox__cuda_group **succs = g->succs != g->succs_inline ? g->succs : NULL;
    if (succs || g->read_insts || g->live_gates || g->copybacks || g->stages || g->carried) {
        mox__free(succs);
        mox__free(g->read_insts);
        mox__free(g->live_gates);
        mox__free(g->copybacks);
        mox__free(g->stages);
        mox__free(g->carried);
    }
    if (g->foreign || g->pins || g->mirrors) /* several devices */
        mox__cuda_foreign_free(g);
    mox__block_free(g, sizeof *g);
}

/* `later` completes only after `earlier` did (once per pair). */
bool mox__cuda_add_succ(mox__cuda_group *earlier, mox__cuda_group *later)
{
    for (uint32_t i = 0; i < earlier->nsucc; i++)
        if (earlier->succs[i] == later)
            return true;
    /* The first few in the group's own room (no allocation per launch),
     * the rest in an array that grows by one. */
    if (earlier->nsucc < MOX__CUDA_SUCCS_INLINE) {
        earlier->succs = earlier->succs_inline;
    } else {
        bool inline_room = earlier->succs == earlier->succs_inline;
        mox__cuda_group **n = mox__realloc(inline_room ? NULL : earlier->succs, (earlier->nsucc + 1) * sizeof *n);
        if (!n)
            return false;
        if (inline_room)
            memcpy(n, earlier->succs_inline, sizeof earlier->succs_inline);
        earlier->succs = n;
    }
    earlier->succs[earlier->nsucc++] = later;
    later->npred++;
    return true;
}

bool mox__cuda_add_reader(mox__cuda_group *g, mox__cuda_inst *inst)
{
    for (uint32_t i = 0; i < g->read_count; i++)
        if (g->read_insts[i] == inst)
            return true;
    mox__cuda_inst **n = mox__realloc(g->read_insts, (g->read_count + 1) * sizeof *n);
    if (!n)
        return false;
    g->read_insts = n;
    g->read_insts[g->read_count++] = inst;
    inst->readers++;
    return true;
}

void mox__cuda_drop_readers(mox__cuda_dev *dev, mox__cuda_group *g)
{
    for (uint32_t i = 0; i < g->read_count; i++) {
        g->read_insts[i]->readers--;
        mox__cuda_inst_release(dev, g->read_insts[i]);
    }
    g->read_count = 0;
}
