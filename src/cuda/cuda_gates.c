/* src/cuda/cuda_gates.c - the status slots a launch's nodes gate on: each
 * gate's slot (a dispatch of this launch, of a launch still running, or a
 * settled outcome), and the slots deferred dispatches carry on to their
 * readers.
 *
 * Deferred dispatches. A kernel with MOX_KFEAT_GATE_DEFERRED checks its
 * gate only before each store, atomic or mox_fail, and its entry asks
 * nothing at its end (mox/kernel_cuda_gate.h): a dispatch whose threads
 * reached no store (n = 0) leaves its status word OK even when a dependency
 * failed. So its word alone does not tell its readers whether it was
 * gated. When its node is described, the slots its own gate reads are kept
 * (mox__cuda_carry_keep: in its launch's group, indexed from its
 * mox__cuda_dstate), and every node gated on it, in the same launch or a
 * later one, reads them too (mox__cuda_carry_in) - transitively, since a
 * deferred dispatch's slots include what its deferred dependencies carried
 * into its gate. A reader whose threads store then sees the failure; one
 * that stores nothing is itself deferred or reads the words at entry. On
 * the host, completion derives the dispatch's GATED state from its
 * dependencies' states (cuda_finish.c).
 *
 * Slot lifetime. A carried slot is an index in the deferred dispatch's
 * own launch, an absolute slot of an earlier launch's instance on which
 * that launch holds a reader count (every absolute slot of its gates is
 * one of those, mox__cuda_add_reader), or the FAILED sentinel. A reader
 * takes them only while the deferred dispatch has not finished (its
 * launch not yet released, which happens under dev->lock, held here), so
 * each such instance is still held; the reader takes its own count on it,
 * as for its direct gates, so its words are not reset before the reader
 * ran. A finished deferred dispatch carries nothing: its state is final on
 * the host (derived), and the gate reads the sentinel or nothing. */
#include "cuda/cuda_internal.h"

/* Slot that gate (sub, j) reads, for a dispatch of launch `g`. */
static bool gate_slot(mox__cuda_dev *dev, mox__cuda_group *g, const mox__gate *gate, bool *intra,
                      uint32_t *slot)
{
    mox__cuda_sub *x = mox__cuda_sub_of(gate->sub);
    *intra = false;
    if (x->group == g) {
        *intra = true;
        *slot = x->offset + gate->dispatch;
        return true;
    }
    if (x->done) {
        bool bad = gate->sub->dispatches[gate->dispatch]->state != MOX_DISPATCH_OK;
        *slot = bad ? MOX__CUDA_SENTINEL_SLOT : MOX__CUDA_OK_SLOT;
        g->check_status |= bad;
        return true;
    }
    if (!x->group || !x->group->launched) {
        /* Its launch failed: it will complete with an error, never OK. */
        *slot = MOX__CUDA_SENTINEL_SLOT;
        g->check_status = true;
        return true;
    }
    *slot = x->group->inst->slot_base + x->offset + gate->dispatch;
    /* A dispatch gated through it raises no flag; at completion (after the
     * earlier launch completed) its state tells whether to read the words. */
    mox__gate *n = mox__realloc(g->live_gates, (g->live_count + 1) * sizeof *n);
    if (!n)
        return false;
    g->live_gates = n;
    g->live_gates[g->live_count++] = *gate;
    atomic_fetch_add(&dev->stats.live_gates, 1);
    return mox__cuda_add_reader(g, x->group->inst);
}

mox_status mox__cuda_describe_gates(mox__cuda_dev *dev, mox__cuda_group *g, const mox__cuda_lnode *ln,
                                    u32vec *gdeps, u32vec *ext, const mox__submission *pub,
                                    const mox__dispatch *d, uint32_t at, bool *may_fail)
{
    for (uint32_t k = 0; k < d->gate_count; k++) {
        const mox__gate *gate = &pub->gates[d->gate_first + k];
        bool intra;
        uint32_t slot;
        const mox__cuda_group *carrier = NULL;
        if (gate->sub->signal.sem->owner != &dev->base) {
            /* A copy's gate on another device's dispatch (a deferred one
             * has settled first: mox__cuda_foreign_block). */
            bool skip;
            mox_status st = mox__cuda_foreign_gate(dev, g, gate, at, &skip, &intra, &slot);
            if (st != MOX_OK)
                return st;
            if (skip)
                continue;
        } else {
            if (mox__cuda_gate_never_closes(dev, g, gate))
                continue;
            const mox__cuda_sub *gs = mox__cuda_sub_of(gate->sub);
            const mox__dispatch *gd = gate->sub->dispatches[gate->dispatch];
            bool live = !gs->done && gs->group && (gs->group->launched || gs->group == g);
            if (!gate_slot(dev, g, gate, &intra, &slot))
                goto oom;
            if (live && (gd->kernel_features & MOX_KFEAT_GATE_DEFERRED))
                carrier = gs->group;
        }
        if (!mox__cuda_u32_push(intra ? gdeps : ext, slot))
            goto oom;
        if (carrier && !mox__cuda_carry_in(g, ln, gdeps, ext, carrier, gate->sub->dispatches[gate->dispatch]))
            goto oom;
        *may_fail = true;
    }
    return MOX_OK;
oom:
    return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory building a launch");
}

/* Appends `slot` to v unless v[from..) has it: a reader of several deferred
 * dispatches behind one failure reads its word once. */
static bool push_unique(u32vec *v, uint32_t from, uint32_t slot)
{
    for (uint32_t i = from; i < v->n; i++)
        if (v->v[i] == slot)
            return true;
    return mox__cuda_u32_push(v, slot);
}

bool mox__cuda_carry_in(mox__cuda_group *g, const mox__cuda_lnode *ln, u32vec *gdeps, u32vec *ext,
                        const mox__cuda_group *carrier, const mox__dispatch *gd)
{
    const mox__cuda_dstate *ds = gd->be;
    for (uint32_t i = 0; ds && i < ds->carry_count; i++) {
        const mox__cuda_carried *c = &carrier->carried[ds->carry_first + i];
        bool ok;
        if (c->intra && carrier == g) {
            ok = push_unique(gdeps, ln->gdep_off, c->slot);
        } else if (c->intra) {
            /* launched (the caller's condition): its instance is set */
            ok = mox__cuda_add_reader(g, carrier->inst) &&
                 push_unique(ext, ln->ext_off, carrier->inst->slot_base + c->slot);
        } else {
            g->check_status |= c->inst == NULL; /* the FAILED sentinel */
            ok = (!c->inst || mox__cuda_add_reader(g, c->inst)) && push_unique(ext, ln->ext_off, c->slot);
        }
        if (!ok)
            return false;
    }
    return true;
}

/* The instance of g's reader counts that holds absolute slot `slot`. */
static mox__cuda_inst *holder_of(const mox__cuda_group *g, uint32_t slot)
{
    for (uint32_t i = 0; i < g->read_count; i++)
        if (slot - g->read_insts[i]->slot_base < g->read_insts[i]->count)
            return g->read_insts[i];
    return NULL;
}

bool mox__cuda_carry_keep(mox__cuda_group *g, const mox__cuda_lnode *ln, const u32vec *gdeps,
                          const u32vec *ext)
{
    mox__cuda_dstate *ds = ln->d->be;
    uint32_t need = g->carried_count + ln->gdep_cnt + ln->ext_cnt;
    if (need > g->carried_cap) {
        uint32_t cap = need > 2u * g->carried_cap ? need : 2u * g->carried_cap;
        mox__cuda_carried *n = mox__realloc(g->carried, cap * sizeof *n);
        if (!n)
            return false;
        g->carried = n;
        g->carried_cap = cap;
    }
    ds->carry_first = g->carried_count;
    for (uint32_t i = 0; i < ln->gdep_cnt; i++)
        g->carried[g->carried_count++] = (mox__cuda_carried){NULL, gdeps->v[ln->gdep_off + i], true};
    for (uint32_t i = 0; i < ln->ext_cnt; i++) {
        uint32_t slot = ext->v[ln->ext_off + i];
        if (slot == MOX__CUDA_OK_SLOT)
            continue;
        mox__cuda_inst *inst = slot == MOX__CUDA_SENTINEL_SLOT ? NULL : holder_of(g, slot);
        if (slot != MOX__CUDA_SENTINEL_SLOT && !inst)
            abort(); /* every absolute slot of a gate is read under a reader count of g */
        g->carried[g->carried_count++] = (mox__cuda_carried){inst, slot, false};
    }
    ds->carry_count = g->carried_count - ds->carry_first;
    return true;
}
