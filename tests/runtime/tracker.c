/* tracker.c - per-buffer access tracking (A6): which earlier submissions a
 * new access waits for, pruning finished ones, the inline reader array
 * growing without losing entries, and references being released. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/device.h"
#include "core/submission.h"
#include "core/tracker_ops.h"

static mox_device fake_dev; /* only info sizes are read by mox__sub_create */

typedef struct seen {
    mox__sub *subs[16];
    int n;
} seen;

static void collect(void *ctx, mox__sub *sub)
{
    seen *s = ctx;
    s->subs[s->n++] = sub;
}

static seen deps(mox__tracker *t, bool writes)
{
    seen s = {{0}, 0};
    mox__tracker_deps(t, writes, 0, collect, &s);
    return s;
}

static seen deps_since(mox__tracker *t, bool writes, uint64_t since)
{
    seen s = {{0}, 0};
    mox__tracker_deps(t, writes, since, collect, &s);
    return s;
}

/* Each batch signals a queue of its own unless a test says otherwise
 * (a reader on the queue of the last one listed replaces it). */
static mox__semaphore queues[64];
static unsigned next_queue;

static mox__sub *new_sub_on(mox__semaphore *queue, uint64_t value)
{
    mox__sub *s = mox__sub_create(&fake_dev);
    assert_non_null(s);
    s->pub.signal = (mox__sem_point){queue, value};
    return s;
}

static mox__sub *new_sub(void)
{
    assert_true(next_queue < 64);
    return new_sub_on(&queues[next_queue++], 1);
}

static void finish(mox__sub *s) { atomic_store(&s->done, true); }

static unsigned refs(mox__sub *s) { return atomic_load(&s->refs); }

static void writer_then_readers(void **state)
{
    (void)state;
    mox__tracker t;
    mox__tracker_init(&t);
    assert_int_equal(deps(&t, false).n, 0);
    assert_int_equal(deps(&t, true).n, 0);

    mox__sub *w = new_sub();
    mox__tracker_record(&t, w, true, 3);
    assert_int_equal(refs(w), 2);
    assert_non_null(mox__tracker_writer(&t));
    assert_int_equal(mox__tracker_writer(&t)->dispatch, 3);
    seen s = deps(&t, false);
    assert_int_equal(s.n, 1);
    assert_ptr_equal(s.subs[0], w);

    /* Readers since the write: a reader waits for the writer only; a
     * writer waits for both the writer and every reader. */
    mox__sub *r[5];
    for (int i = 0; i < 5; i++) {
        r[i] = new_sub();
        assert_true(mox__tracker_reserve(&t));
        mox__tracker_record(&t, r[i], false, 0);
    }
    assert_int_equal(deps(&t, false).n, 1);
    s = deps(&t, true);
    assert_int_equal(s.n, 6); /* beyond the 3 inline slots */
    for (int i = 0; i < 5; i++)
        assert_ptr_equal(s.subs[1 + i], r[i]);

    /* Finished ones are pruned (and their references dropped). */
    finish(r[1]);
    finish(r[3]);
    s = deps(&t, true);
    assert_int_equal(s.n, 4);
    assert_int_equal(refs(r[1]), 1);
    finish(w);
    mox__tracker_prune(&t);
    assert_null(mox__tracker_writer(&t));
    assert_int_equal(deps(&t, false).n, 0);
    assert_int_equal(refs(w), 1);

    /* A new writer stands for everything before it. */
    mox__sub *w2 = new_sub();
    mox__tracker_record(&t, w2, true, 0);
    assert_int_equal(refs(r[0]), 1);
    s = deps(&t, true);
    assert_int_equal(s.n, 1);
    assert_ptr_equal(s.subs[0], w2);

    mox__tracker_clear(&t);
    assert_int_equal(refs(w2), 1);
    mox__sub_unref(w);
    mox__sub_unref(w2);
    for (int i = 0; i < 5; i++)
        mox__sub_unref(r[i]);
}

/* A finished writer is pruned for an access that was never queued, and
 * for one queued after it finished; one queued while it ran keeps it (its
 * gate, A9), and so does every later access queued before it finished,
 * even after a reader made room in the reader array. */
static void finished_writer_kept_for_earlier_queued(void **state)
{
    (void)state;
    mox__tracker t;
    mox__tracker_init(&t);
    mox__sub *w = new_sub();
    mox__tracker_record(&t, w, true, 0);
    w->done_at = 10;
    finish(w);
    seen s = deps_since(&t, false, 5);
    assert_int_equal(s.n, 1);
    assert_ptr_equal(s.subs[0], w);
    assert_ptr_equal(mox__tracker_writer(&t)->sub, w);
    for (int i = 0; i < 4; i++) { /* past the inline slots: grows */
        mox__sub *r = new_sub();
        assert_true(mox__tracker_reserve(&t));
        mox__tracker_record(&t, r, false, 0);
        finish(r);
        mox__sub_unref(r);
    }
    assert_int_equal(deps_since(&t, false, 9).n, 1);
    assert_int_equal(deps_since(&t, false, 10).n, 0); /* queued after it finished */
    assert_null(mox__tracker_writer(&t));
    assert_int_equal(refs(w), 1);

    mox__tracker_record(&t, w, true, 0);
    assert_int_equal(deps_since(&t, false, 0).n, 0); /* never queued */
    assert_null(mox__tracker_writer(&t));
    mox__tracker_clear(&t);
    mox__sub_unref(w);
}

/* Readers on one queue: each stands for the one before it (a higher value
 * of the same timeline), so the list keeps the last of a run; a reader on
 * another queue in between is kept, and so is the run's last before it. */
static void readers_on_one_queue_keep_the_last(void **state)
{
    (void)state;
    mox__semaphore q0, q1;
    mox__tracker t;
    mox__tracker_init(&t);
    mox__sub *r[6];
    for (int i = 0; i < 4; i++) {
        r[i] = new_sub_on(&q0, (uint64_t)i + 1);
        assert_true(mox__tracker_reserve(&t));
        mox__tracker_record(&t, r[i], false, 0);
        assert_int_equal(t.reader_count, 1);
        assert_int_equal(refs(r[i]), 2);
        if (i > 0)
            assert_int_equal(refs(r[i - 1]), 1); /* its entry's reference went */
    }
    seen s = deps(&t, true);
    assert_int_equal(s.n, 1);
    assert_ptr_equal(s.subs[0], r[3]);

    r[4] = new_sub_on(&q1, 1); /* another queue: listed after it */
    assert_true(mox__tracker_reserve(&t));
    mox__tracker_record(&t, r[4], false, 0);
    r[5] = new_sub_on(&q0, 5); /* q0 again, after q1's: listed too */
    assert_true(mox__tracker_reserve(&t));
    mox__tracker_record(&t, r[5], false, 0);
    s = deps(&t, true);
    assert_int_equal(s.n, 3);
    assert_ptr_equal(s.subs[0], r[3]);
    assert_ptr_equal(s.subs[1], r[4]);
    assert_ptr_equal(s.subs[2], r[5]);

    mox__tracker_clear(&t);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(refs(r[i]), 1);
        mox__sub_unref(r[i]);
    }
}

static void edges_within_a_batch(void **state)
{
    (void)state;
    /* Dispatch shapes only: buffers are fake handles (never dereferenced
     * by recording beyond their identity). */
    mox_buffer *x = (mox_buffer *)0x1000, *y = (mox_buffer *)0x2000;
    mox__sub *s = new_sub();
    struct {
        mox_buffer *b;
        mox_access a;
    } plan[4][2] = {
        {{x, MOX_ACCESS_READ}, {y, MOX_ACCESS_WRITE}},  /* 0: y = f(x) */
        {{y, MOX_ACCESS_READ}, {NULL, 0}},               /* 1: reads y   -> after 0 (RAW) */
        {{x, MOX_ACCESS_WRITE}, {NULL, 0}},              /* 2: writes x  -> after 0 (WAR) */
        {{y, MOX_ACCESS_WRITE}, {x, MOX_ACCESS_READ}},   /* 3: -> after 1 (WAR), 2 (RAW); 0 (WAW) is
                                                          * implied: 1 and 2 follow it */
    };
    for (int i = 0; i < 4; i++) {
        mox__dispatch *d = mox__dispatch_alloc(&fake_dev, 2, 0, NULL);
        assert_non_null(d);
        for (int a = 0; a < 2; a++) {
            d->args[a].buffer = plan[i][a].b;
            d->args[a].access = plan[i][a].a;
        }
        assert_int_equal(mox__sub_push(s, d), MOX_OK);
        d->args[0].buffer = d->args[1].buffer = NULL; /* fake: not released */
    }
    const uint32_t want_count[4] = {0, 1, 1, 2};
    for (int i = 0; i < 4; i++)
        assert_int_equal(s->d[i]->pred_count, want_count[i]);
    assert_int_equal(s->preds[s->d[1]->pred_first], 0);
    assert_int_equal(s->preds[s->d[2]->pred_first], 0);
    uint32_t got = 0;
    for (uint32_t k = 0; k < 2; k++)
        got |= 1u << s->preds[s->d[3]->pred_first + k];
    assert_int_equal(got, 0x6);
    /* Successor counts follow the kept edges: 0 -> 1, 2; 1 -> 3; 2 -> 3. */
    assert_int_equal(s->d[0]->succ_count, 2);
    assert_int_equal(s->d[1]->succ_count, 1);
    assert_int_equal(s->d[2]->succ_count, 1);
    assert_int_equal(s->d[3]->succ_count, 0);
    assert_int_equal(s->nubs, 2);
    assert_int_equal(s->ubs[0].first_write, 2); /* x */
    assert_int_equal(s->ubs[1].last_write, 3);  /* y */
    mox__sub_unref(s);
}

/* A ping-pong chain (y = f(x), x = g(y), ...): each dispatch writes what
 * the one before last wrote and the one before read, so its edge from the
 * one before last is implied and dropped: every dispatch keeps one edge,
 * from the one just before it. */
static void ping_pong_keeps_one_edge_each(void **state)
{
    (void)state;
    mox_buffer *x = (mox_buffer *)0x1000, *y = (mox_buffer *)0x2000;
    mox__sub *s = new_sub();
    for (int i = 0; i < 6; i++) {
        mox__dispatch *d = mox__dispatch_alloc(&fake_dev, 2, 0, NULL);
        assert_non_null(d);
        d->args[0] = (mox__karg){i % 2 ? y : x, MOX_ACCESS_READ, 0};
        d->args[1] = (mox__karg){i % 2 ? x : y, MOX_ACCESS_WRITE, 0};
        assert_int_equal(mox__sub_push(s, d), MOX_OK);
        d->args[0].buffer = d->args[1].buffer = NULL; /* fake: not released */
    }
    assert_int_equal(s->d[0]->pred_count, 0);
    for (uint32_t i = 1; i < 6; i++) {
        assert_int_equal(s->d[i]->pred_count, 1);
        assert_int_equal(s->preds[s->d[i]->pred_first], i - 1);
        assert_int_equal(s->d[i - 1]->succ_count, 1);
    }
    assert_int_equal(s->npreds, 5);
    mox__sub_unref(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writer_then_readers),
        cmocka_unit_test(finished_writer_kept_for_earlier_queued),
        cmocka_unit_test(readers_on_one_queue_keep_the_last),
        cmocka_unit_test(edges_within_a_batch),
        cmocka_unit_test(ping_pong_keeps_one_edge_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
