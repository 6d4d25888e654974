/* src/cuda/cuda_sem.c - the backend state of a queue's semaphore
 * (semaphore_init; sem->be): the launches of that stream pushed to
 * completion and not finished - each with its event and status words -
 * and the highest value finished (docs/multi-device.md). It is the one
 * place another CUDA device looks, under the state's lock (a leaf, taken
 * under any device's dev->lock, never over a driver call or an allocation:
 * a spin lock, as its owner takes it twice per launch), never into the
 * owner's own lists. What another device takes from it stays valid until
 * it gives it back:
 *   - an event it will wait for (cuStreamWaitEvent, called by its launcher
 *     with no lock held) is pinned: the owner does not return it to its
 *     pool, where its own launcher could record it again, before that;
 *   - a status word it will copy is held through the owner's instance
 *     (foreign_readers): the instance is not reset before the copy ran. */
#include "cuda/cuda_internal.h"
#include "core/sync.h"

#include <stdlib.h>
#include <string.h>

typedef struct mox__cuda_evpin {
    struct mox__cuda_evpin *next;
    CUevent event;
    uint32_t count;
    bool spin;                        /* its kind (its pool) */
    bool orphan;                      /* its launch finished: the last unpin gives it back */
} mox__cuda_evpin;

struct mox__cuda_sem {
    mox__cuda_dev *owner;
    /* The lock: a leaf, and a spin lock (core/sync.h), as the owner takes
     * it twice per launch (register, unregister) and a pthread mutex cost
     * about 50 instructions a pair; held for a few loads and stores (a
     * list walk at most), never over a call. */
    mox__spin lock;
    mox__cuda_group *head, *tail;     /* registered launches, oldest first */
    uint64_t finished;                /* values up to it finished: states final */
    mox__cuda_evpin *pins;
};

void *mox__cuda_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        abort(); /* a few bytes of bookkeeping */
    return q;
}

mox_error *mox__cuda_sem_init(mox__cuda_dev *dev, mox__semaphore *sem)
{
    mox__cuda_sem *st = mox__calloc(1, sizeof *st);
    if (!st)
        return mox__error_new(MOX_ERR_OUT_OF_MEMORY, "out of memory for a CUDA semaphore");
    st->owner = dev;
    mox__spin_init(&st->lock);
    sem->be = st;
    if (sem->queue < MOX__CUDA_STREAMS)
        dev->sems[sem->queue] = st;
    return NULL;
}

void mox__cuda_sem_fini(mox__cuda_dev *dev, mox__semaphore *sem)
{
    mox__cuda_sem *st = sem->be;
    if (!st)
        return;
    if (sem->queue < MOX__CUDA_STREAMS && dev->sems[sem->queue] == st)
        dev->sems[sem->queue] = NULL;
    mox__free(st);
    sem->be = NULL;
}

mox__cuda_dev *mox__cuda_sem_owner(const mox__cuda_sem *st) { return st->owner; }

void mox__cuda_sem_register(mox__cuda_dev *dev, mox__cuda_group *g)
{
    mox__cuda_sem *st = g->stream < MOX__CUDA_STREAMS ? dev->sems[g->stream] : NULL;
    if (!st || g->first_value == 0)
        return;
    mox__spin_lock(&st->lock);
    g->sem_prev = st->tail;
    g->sem_next = NULL;
    if (st->tail)
        st->tail->sem_next = g;
    else
        st->head = g;
    st->tail = g;
    g->sem = st;
    mox__spin_unlock(&st->lock);
}

bool mox__cuda_sem_unregister(mox__cuda_dev *dev, mox__cuda_group *g)
{
    (void)dev;
    mox__cuda_sem *st = g->sem;
    if (!st)
        return true;
    bool back = true;
    mox__spin_lock(&st->lock);
    for (mox__cuda_evpin *p = st->pins; g->launched && p; p = p->next)
        if (p->event == g->event) {
            p->orphan = true;
            back = false;
        }
    if (g->sem_prev)
        g->sem_prev->sem_next = g->sem_next;
    else
        st->head = g->sem_next;
    if (g->sem_next)
        g->sem_next->sem_prev = g->sem_prev;
    else
        st->tail = g->sem_prev;
    if (g->last_value > st->finished)
        st->finished = g->last_value; /* a stream's launches finish in order */
    mox__spin_unlock(&st->lock);
    g->sem = NULL;
    g->sem_next = g->sem_prev = NULL;
    return back;
}

/* The state of a point. Caller holds the state's lock. */
static mox__cuda_pt classify_locked(mox__cuda_sem *st, uint64_t value, mox__cuda_group **out)
{
    for (mox__cuda_group *g = st->head; g; g = g->sem_next)
        if (g->first_value <= value && value <= g->last_value) {
            *out = g;
            return g->launched ? MOX__CUDA_PT_LIVE : MOX__CUDA_PT_FAILED;
        }
    return value <= st->finished ? MOX__CUDA_PT_SETTLED : MOX__CUDA_PT_UNKNOWN;
}

/* Pins `event`, in `spare` (made before the lock was taken) when it is
 * not pinned yet; returns `spare` when unused. Caller holds the state's lock. */
static mox__cuda_evpin *pin_event_locked(mox__cuda_sem *st, CUevent event, bool spin,
                                         mox__cuda_evpin *spare)
{
    for (mox__cuda_evpin *p = st->pins; p; p = p->next)
        if (p->event == event) {
            p->count++;
            return spare;
        }
    *spare = (mox__cuda_evpin){st->pins, event, 1, spin, false};
    st->pins = spare;
    return NULL;
}

mox__cuda_pt mox__cuda_sem_point(mox__cuda_sem *st, uint64_t value, CUevent *event)
{
    mox__cuda_group *g = NULL;
    mox__cuda_evpin *spare = event ? mox__cuda_xrealloc(NULL, sizeof *spare) : NULL;
    mox__spin_lock(&st->lock);
    mox__cuda_pt s = classify_locked(st, value, &g);
    if (s == MOX__CUDA_PT_LIVE && event) {
        spare = pin_event_locked(st, g->event, g->event_spin, spare);
        *event = g->event;
    }
    mox__spin_unlock(&st->lock);
    free(spare);
    return s;
}

void mox__cuda_sem_unpin_event(mox__cuda_sem *st, CUevent event)
{
    mox__cuda_evpin *gone = NULL;
    mox__spin_lock(&st->lock);
    for (mox__cuda_evpin **p = &st->pins; *p; p = &(*p)->next)
        if ((*p)->event == event) {
            if (--(*p)->count == 0) {
                gone = *p;
                *p = gone->next;
            }
            break;
        }
    mox__spin_unlock(&st->lock);
    if (gone && gone->orphan)
        mox__cuda_event_put(st->owner, gone->spin, gone->event); /* its launch finished meanwhile */
    free(gone);
}

mox__cuda_pt mox__cuda_sem_gate(mox__cuda_sem *st, const mox__submission *sub, uint32_t j,
                                bool *may_fail, CUdeviceptr *word, mox__cuda_inst **inst)
{
    mox__cuda_group *g = NULL;
    mox__spin_lock(&st->lock);
    mox__cuda_pt s = classify_locked(st, sub->signal.value, &g);
    /* Its dispatch state (d->be) was written before the launch entered
     * the state: read under the lock. */
    *may_fail = s == MOX__CUDA_PT_LIVE && mox__cuda_may_fail(sub->dispatches[j]);
    if (*may_fail) {
        atomic_fetch_add(&g->inst->foreign_readers, 1); /* until mox__cuda_foreign_release */
        *inst = g->inst;
        *word = st->owner->pool + 8ull * (g->inst->slot_base + mox__cuda_sub_of(sub)->offset + j);
    }
    mox__spin_unlock(&st->lock);
    return s;
}
