/* src/cuda/cuda_watch.c - a waiting user thread completing its own launch
 * (mox__cuda_complete_inline), and sleeping through most of a long one.
 *
 * mox_op_wait lends its thread (HAL complete_inline): for a launch that
 * carries its execution alone and waits for nothing, the thread claims it
 * (the completion thread leaves it alone), queries its event at a short
 * pace and completes it here the moment it is done: no hand-off through
 * the completion thread, two wake-ups fewer. Past its spin (or at once
 * with none) the core lets it block in cuEventSynchronize on the launch's
 * blocking-sync event and complete it then: one wake-up instead of the
 * completion thread's and then its own.
 *
 * A long launch would keep that thread spinning for all of it. So each
 * plan remembers how long its runs take, measured here on runs launched
 * onto an idle device (nothing else in flight: then a run's time is its
 * own). When a claimed launch is of an instance whose runs took at least
 * MOX_CUDA_NAP_US (default 0: never; opt-in, as a sleep costs the H200's
 * 1-3 ms runs 0.5-1.5 % of latency), and it is still early, the thread sleeps
 * (HAL wait->nap, no CPU) until a margin before the expected end - a
 * sixteenth of the run, at least NAP_MARGIN_MIN_US - then queries again at
 * the short pace, so the end is still seen within a microsecond. The
 * estimate follows the runs: a shorter run lowers it at once (even one
 * seen late after a nap: the time seen is an upper bound), a longer one
 * raises it by a quarter of the difference; naps start after two runs were
 * measured, so a first, cold run does not set it alone.
 */
#include "cuda/cuda_plan_internal.h"

/* Least time the thread queries again before the expected end: covers
 * the timer's slack and a wake-up on a busy virtual machine. */
#define NAP_MARGIN_MIN_US 250u
/* A nap shorter than this is not worth the wake-up. */
#define NAP_LEAST_US 100u

/* Gives a group a waiting thread watched back to the completion thread. */
static void unclaim(mox__cuda_dev *dev, mox__cuda_group *g)
{
    mox__lock(&dev->lock);
    g->claimed = false;
    if (dev->waiting) /* quiet or not: this launch is the thread's now */
        mox__cond_signal(&dev->work_cv);
    mox__unlock(&dev->lock);
}

/* Query pace of a watching user thread: tight at first (a raw spin wait
 * queries back to back; most launches end within tens of microseconds),
 * then every half microsecond: the end of a long launch is then seen
 * 0.25 us late on average (4 us pacing lost 1-1.5 % of a 250 us
 * single-shot kernel on the H200), for a few driver calls per microsecond
 * on a thread that spins anyway. */
static uint64_t watch_pace_ns(uint64_t waited_ns)
{
    return waited_ns < 20000u ? 200u : 500u;
}

/* The graph instance of a claimed launch whose run time may be
 * measured: one launched onto an idle device. It reads only what the
 * launch fixed before it was published (a plan's use_graph is set when the
 * plan is made), so the claimer needs no lock for it. */
static mox__cuda_inst *timed_inst(const mox__cuda_group *g)
{
    return g->idle_launch && g->inst && g->inst->plan->use_graph ? g->inst : NULL;
}

uint64_t mox__cuda_nap_end(const mox__cuda_dev *dev, const mox__cuda_inst *p, uint64_t launch_ns)
{
    if (!p || p->run_obs < 2 || dev->nap_min_ns == 0 || p->run_ns < dev->nap_min_ns)
        return 0;
    uint64_t margin = p->run_ns / 16u;
    if (margin < 1000ull * NAP_MARGIN_MIN_US)
        margin = 1000ull * NAP_MARGIN_MIN_US;
    return p->run_ns > margin ? launch_ns + p->run_ns - margin : 0;
}

void mox__cuda_run_observe(mox__cuda_dev *dev, mox__cuda_inst *p, uint64_t ns, uint64_t gap,
                           bool napped)
{
    if (!p)
        return;
    if (gap > 20000u && gap > ns / 64u) {
        if (p->run_obs && ns < p->run_ns) {
            if (napped)
                atomic_fetch_add_explicit(&dev->stats.nap_overslept, 1, memory_order_relaxed);
            p->run_ns = ns;
            p->run_obs = 0;
        }
        return;
    }
    p->run_ns = !p->run_obs || ns < p->run_ns ? ns : p->run_ns + (ns - p->run_ns) / 4u;
    if (p->run_obs < UINT32_MAX)
        p->run_obs++;
}

/* While the waiting thread sleeps it does not count as a watcher: the
 * completion thread need not stay awake for it. */
static void step_aside(mox__cuda_dev *dev, const mox__inline_wait *wait, bool aside)
{
    if (!wait->watching)
        return;
    if (aside)
        atomic_fetch_sub_explicit(&dev->watchers, 1, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&dev->watchers, 1, memory_order_relaxed);
}

/* Sleeps until `until`; true when stop says to give the launch back. */
static bool nap(mox__cuda_dev *dev, const mox__inline_wait *wait, uint64_t until)
{
    step_aside(dev, wait, true);
    atomic_fetch_add_explicit(&dev->stats.inline_naps, 1, memory_order_relaxed);
    bool stop = wait->nap(wait->ctx, until);
    uint64_t woke = mox__cuda_now_ns();
    if (woke > until)
        atomic_fetch_add_explicit(&dev->stats.nap_late_ns, woke - until, memory_order_relaxed);
    step_aside(dev, wait, false);
    return stop;
}

/* Past the waiter's spin: blocks in the driver until g is done
 * (mox__cuda_event_sleep), *r its result (from a query of g's event only
 * when the sleep did not end in success); false when it cannot (g is no
 * longer the newest launch of its stream). */
static bool block_on(mox__cuda_dev *dev, mox__cuda_group *g, const mox__inline_wait *wait,
                     CUresult *r)
{
    step_aside(dev, wait, true);
    bool slept = mox__cuda_event_sleep(dev, g, r);
    if (slept) {
        atomic_fetch_add_explicit(&dev->stats.inline_blocks, 1, memory_order_relaxed);
        if (*r != CUDA_SUCCESS)
            *r = dev->api->cuEventQuery(g->event);
    }
    step_aside(dev, wait, false);
    return slept;
}

/* Claims `pub`'s launch for this thread, or counts why not; dev->lock
 * taken here. On success *wake is when to end a nap (0: none). */
static mox__cuda_group *claim(mox__cuda_dev *dev, mox__submission *pub, uint64_t *wake)
{
    mox__lock(&dev->lock);
    mox__cuda_group *g = mox__cuda_sub_of(pub)->group;
    /* Only a launch of this execution alone: completing it calls no other
     * op's waker on the waiting thread. */
    atomic_ullong *declined = NULL;
    if (!g || !g->linked || !g->launched)
        declined = &dev->stats.inline_not_out;
    else if (g->nsubs != 1 || g->npred != 0 || !mox__cuda_foreign_ready(g))
        declined = &dev->stats.inline_shared;
    else if (g->claimed)
        declined = &dev->stats.inline_taken;
    else {
        g->claimed = true; /* the completion thread leaves it alone now */
        *wake = mox__cuda_nap_end(dev, timed_inst(g), g->launch_ns);
    }
    mox__unlock(&dev->lock);
    if (declined) {
        atomic_fetch_add_explicit(declined, 1, memory_order_relaxed);
        return NULL;
    }
    return g;
}

/* Queries g's event until it is done (true: *r its result, *seen when,
 * *gap since the query that found it still running, UINT64_MAX if none
 * did) or the wait ends (false); *napped: it slept through part of it. */
static bool watch(mox__cuda_dev *dev, mox__cuda_group *g, const mox__inline_wait *wait,
                  uint64_t wake, CUresult *r, uint64_t *seen, uint64_t *gap, bool *napped)
{
    *napped = false;
    uint64_t deadline = wait->until_ns, last_running = 0;
    for (uint64_t start = mox__cuda_now_ns();;) {
        *r = dev->api->cuEventQuery(g->event);
        *seen = mox__cuda_now_ns();
        if (*r != CUDA_ERROR_NOT_READY) {
            *gap = last_running ? *seen - last_running : UINT64_MAX;
            return true;
        }
        uint64_t t = last_running = *seen;
        if (wait->stop(wait->ctx))
            return false;
        if (t >= deadline) {
            if (!wait->block_after || !block_on(dev, g, wait, r))
                return false;
            *seen = mox__cuda_now_ns();
            *gap = UINT64_MAX; /* seen after a wake-up: an upper bound */
            return true;
        }
        if (wake && wait->nap && t + 1000ull * NAP_LEAST_US < wake) {
            bool stop = nap(dev, wait, wake);
            *napped = true;
            deadline += mox__cuda_now_ns() - t; /* sleeping does not use up the spin */
            wake = 0; /* last_running stays: a run that ended meanwhile is seen late */
            if (stop)
                return false;
            continue;
        }
        for (uint64_t until = t + watch_pace_ns(t - start); mox__cuda_now_ns() < until;)
            mox__cuda_cpu_relax();
    }
}

bool mox__cuda_complete_inline(mox__cuda_dev *dev, mox__submission *pub,
                               const mox__inline_wait *wait)
{
    uint64_t wake = 0;
    mox__cuda_group *g = claim(dev, pub, &wake);
    if (!g)
        return false;
    /* The waiting thread is the user's: another context, or none, may be
     * current on it. Event queries, records and synchronizations need
     * none (events carry theirs: H200, driver 580); a sleep sets it where
     * it creates an event, finishing where it reads status words or trace
     * events. Only staging given back (it may free pinned memory) needs it
     * here: if it cannot be made current, the completion thread finishes. */
    CUresult r;
    uint64_t seen, gap;
    bool napped;
    if (!watch(dev, g, wait, wake, &r, &seen, &gap, &napped)) {
        atomic_fetch_add_explicit(&dev->stats.inline_missed, 1, memory_order_relaxed);
        unclaim(dev, g);
        return false;
    }
    if (g->stage_count && mox__cuda_dev_enter(dev) != MOX_OK) {
        unclaim(dev, g);
        return false;
    }
    atomic_fetch_add(&dev->stats.inline_completions, 1);
    /* Still claimed and linked: the run is observed, g unlinked and the
     * quiet window opened under the lock its release takes anyway (one
     * lock round trip, not two). timed_inst reads what its launch fixed.
     * The completion thread may hold g in its snapshot: it is freed there. */
    mox__cuda_seen by = {seen, r == CUDA_SUCCESS ? timed_inst(g) : NULL, seen - g->launch_ns, gap,
                         napped};
    mox__cuda_group_finish(dev, g, r, &by);
    return true;
}
