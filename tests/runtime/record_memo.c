/* record_memo.c - the recording memo (src/core/record_memo.c): a batch
 * recorded through mox__sub_record and sealed has the edges, successor
 * counts, ub table and argument ub indices that mox__sub_push alone gives
 * it, whether it repeats the thread's last batch, differs from it in a
 * buffer, an access or its length, or follows a memo that another batch's
 * seal replaced meanwhile. A batch whose seal took the memo's tables
 * (`laid`) also has the successors and gate candidates that preparation
 * would compute from those (prepare.c), and is laid exactly when it
 * repeats the memo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/buffer.h"
#include "core/device.h"
#include "core/record_memo.h"

static mox_device fake_dev; /* only info sizes are read */

enum { BUFS = 5, MAX_D = 10, MAX_A = 4 };
static mox_buffer bufs[BUFS];

/* A batch: per dispatch its arguments, each a buffer index (-1: a value)
 * and an access. */
typedef struct spec {
    uint32_t count;
    uint32_t nargs[MAX_D];
    int buf[MAX_D][MAX_A];
    mox_access access[MAX_D][MAX_A];
} spec;

static void bufs_init(void)
{
    for (int i = 0; i < BUFS; i++) {
        bufs[i].magic = MOX__MAGIC_BUFFER;
        atomic_init(&bufs[i].refs, 1u << 30); /* never destroyed */
    }
}

static mox__dispatch *make_dispatch(const spec *sp, uint32_t i)
{
    mox__dispatch *d = mox__dispatch_alloc(&fake_dev, sp->nargs[i], 16, NULL);
    assert_non_null(d);
    for (uint32_t a = 0; a < sp->nargs[i]; a++) {
        if (sp->buf[i][a] < 0)
            continue;
        d->args[a].buffer = mox__buffer_ref(&bufs[sp->buf[i][a]]);
        d->args[a].access = sp->access[i][a];
    }
    return d;
}

static mox__sub *reference(const spec *sp)
{
    mox__sub *s = mox__sub_create(&fake_dev);
    assert_non_null(s);
    for (uint32_t i = 0; i < sp->count; i++)
        assert_int_equal(mox__sub_push(s, make_dispatch(sp, i)), MOX_OK);
    return s;
}

static mox__sub *begin(void)
{
    mox__sub *s = mox__sub_create(&fake_dev);
    assert_non_null(s);
    return s;
}

static void push_all(mox__sub *s, const spec *sp)
{
    for (uint32_t i = 0; i < sp->count; i++)
        assert_int_equal(mox__sub_record(s, make_dispatch(sp, i)), MOX_OK);
}

/* A laid batch `a` against the batch `r` that mox__sub_push recorded:
 * its successors are the inverse of r's predecessors, each dispatch's
 * after the previous one's, in dispatch order (what preparation lays
 * out), and its gate candidates are, per dispatch, the buffers of its
 * arguments that r does not write before it, in argument order, each
 * once. */
static void same_layout(const mox__sub *a, const mox__sub *r)
{
    uint32_t succs[4 * MAX_D * MAX_A], fill[MAX_D], at = 0;
    for (uint32_t i = 0; i < r->count; i++) {
        assert_int_equal(a->d[i]->succ_first, at);
        at += r->d[i]->succ_count;
        fill[i] = 0;
    }
    assert_int_equal(at, r->npreds);
    for (uint32_t i = 0; i < r->count; i++) {
        const mox__dispatch *d = r->d[i];
        for (uint32_t k = d->pred_first; k < d->pred_first + d->pred_count; k++) {
            uint32_t p = r->preds[k];
            succs[a->d[p]->succ_first + fill[p]++] = i;
        }
    }
    for (uint32_t i = 0; i < r->count; i++)
        assert_int_equal(fill[i], r->d[i]->succ_count);
    assert_ptr_equal(a->pub.succs, r->npreds ? a->succs : NULL);
    for (uint32_t p = 0; p < r->npreds; p++)
        assert_int_equal(a->succs[p], succs[p]);
    const uint8_t *c = (const uint8_t *)a->cands;
    uint32_t len = 0;
    for (uint32_t i = 0; i < r->count; i++) {
        const mox__dispatch *d = r->d[i];
        uint8_t want[MAX_A];
        uint32_t n = 0;
        for (uint32_t k = 0; k < d->arg_count; k++) {
            if (!d->args[k].buffer)
                continue;
            uint32_t u = d->args[k].ub;
            if (r->ubs[u].first_write >= 0 && (int32_t)i > r->ubs[u].first_write)
                continue;
            bool seen = false;
            for (uint32_t e = 0; e < n; e++)
                seen |= want[e] == u;
            if (!seen)
                want[n++] = (uint8_t)u;
        }
        assert_int_equal(c[len++], n);
        for (uint32_t e = 0; e < n; e++)
            assert_int_equal(c[len++], want[e]);
    }
    assert_true(len <= a->cands_words * 8);
}

static void same_tables(const mox__sub *a, const mox__sub *b)
{
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->npreds, b->npreds);
    assert_int_equal(a->nubs, b->nubs);
    assert_ptr_equal(a->pub.preds, a->preds);
    assert_int_equal(a->pub.count, b->pub.count);
    for (uint32_t p = 0; p < a->npreds; p++)
        assert_int_equal(a->preds[p], b->preds[p]);
    for (uint32_t u = 0; u < a->nubs; u++) {
        assert_ptr_equal(a->ubs[u].buffer, b->ubs[u].buffer);
        assert_int_equal(a->ubs[u].first_write, b->ubs[u].first_write);
        assert_int_equal(a->ubs[u].last_write, b->ubs[u].last_write);
        assert_int_equal(a->ubs[u].refs, b->ubs[u].refs);
    }
    for (uint32_t i = 0; i < a->count; i++) {
        const mox__dispatch *x = a->d[i], *y = b->d[i];
        assert_int_equal(x->index, i);
        assert_int_equal(x->pred_first, y->pred_first);
        assert_int_equal(x->pred_count, y->pred_count);
        assert_int_equal(x->succ_count, y->succ_count);
        /* (a laid batch's argument ub indices are not written) */
        for (uint32_t k = 0; k < x->arg_count && !a->laid; k++)
            if (x->args[k].buffer)
                assert_int_equal(x->args[k].ub, y->args[k].ub);
    }
    if (a->laid)
        same_layout(a, b);
}

/* Whether two specs record the same dispatches (a value's access is not
 * recorded). */
static bool same_spec(const spec *x, const spec *y)
{
    if (x->count != y->count)
        return false;
    for (uint32_t i = 0; i < x->count; i++) {
        if (x->nargs[i] != y->nargs[i])
            return false;
        for (uint32_t a = 0; a < x->nargs[i]; a++)
            if (x->buf[i][a] != y->buf[i][a] ||
                (x->buf[i][a] >= 0 && x->access[i][a] != y->access[i][a]))
                return false;
    }
    return true;
}

/* Records `sp` through the memo, seals it and checks it against push;
 * `laid`: whether its seal must take the memo's tables (-1: either). */
static void check_laid(const spec *sp, int laid)
{
    mox__sub *s = begin();
    push_all(s, sp);
    assert_int_equal(mox__sub_seal(s), MOX_OK);
    if (laid >= 0)
        assert_int_equal(s->laid, laid);
    mox__sub *r = reference(sp);
    same_tables(s, r);
    mox__sub_unref(s);
    mox__sub_unref(r);
}

static void check(const spec *sp) { check_laid(sp, -1); }

static uint32_t rng_state = 12345;
static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (rng_state >> 16) % n;
}

static spec random_spec(void)
{
    spec sp;
    memset(&sp, 0, sizeof sp);
    sp.count = 1 + rnd(MAX_D);
    for (uint32_t i = 0; i < sp.count; i++) {
        sp.nargs[i] = 1 + rnd(MAX_A);
        for (uint32_t a = 0; a < sp.nargs[i]; a++) {
            sp.buf[i][a] = rnd(6) == 0 ? -1 : (int)rnd(BUFS);
            sp.access[i][a] = (mox_access)rnd(3);
        }
    }
    return sp;
}

static void repeated_and_changed(void **state)
{
    (void)state;
    bufs_init();
    for (int round = 0; round < 400; round++) {
        spec sp = random_spec();
        check(&sp); /* remembered (or follows the last one, differing) */
        check_laid(&sp, 1); /* follows the memo */
        spec other = sp;
        uint32_t i = rnd(sp.count), a = rnd(sp.nargs[i]);
        switch (rnd(4)) {
        case 0: /* another buffer */
            other.buf[i][a] = (other.buf[i][a] + 2) % BUFS;
            break;
        case 1: /* another access */
            other.access[i][a] = (mox_access)((other.access[i][a] + 1) % 3);
            break;
        case 2: /* shorter */
            other.count = i ? i : 1;
            break;
        default: /* longer */
            other.count = other.count < MAX_D ? other.count + 1 : other.count;
            break;
        }
        bool same = same_spec(&sp, &other);
        check_laid(&other, same); /* the memo only when it records the same */
        check_laid(&sp, same);
    }
}

/* A batch following the memo while another batch's seal replaces it. */
static void memo_replaced_meanwhile(void **state)
{
    (void)state;
    bufs_init();
    for (int round = 0; round < 100; round++) {
        spec x = random_spec(), y = random_spec();
        check(&x);
        mox__sub *s = begin();
        mox__sub *r = reference(&x);
        uint32_t half = x.count / 2;
        for (uint32_t i = 0; i < half; i++)
            assert_int_equal(mox__sub_record(s, make_dispatch(&x, i)), MOX_OK);
        check(&y); /* replaces the memo */
        for (uint32_t i = half; i < x.count; i++)
            assert_int_equal(mox__sub_record(s, make_dispatch(&x, i)), MOX_OK);
        assert_int_equal(mox__sub_seal(s), MOX_OK);
        assert_int_equal(s->laid, same_spec(&x, &y)); /* y's memo is x's only then */
        same_tables(s, r);
        mox__sub_unref(s);
        mox__sub_unref(r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(repeated_and_changed),
        cmocka_unit_test(memo_replaced_meanwhile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
