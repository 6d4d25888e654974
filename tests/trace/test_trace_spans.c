/* test_trace_spans.c - the set of began spans a trace keeps
 * (src/core/trace_spans.c) against a plain array: random adds, lookups
 * and removals over a small key range, so that runs of colliding keys are
 * grown, split and shifted back; a key lost by a removal would drop a
 * span's end from every later trace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core/trace_internal.h"

enum { KEYS = 700, STEPS = 200000 };

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void matches_a_plain_set(void **state)
{
    (void)state;
    static bool in[KEYS];
    mox__trace_spans s = {0};
    size_t count = 0;
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (long step = 0; step < STEPS; step++) {
        uint64_t k = next_random(&r) % KEYS;
        /* op keys are addresses (multiples of 8), batch keys have the top bit */
        uint64_t key = k & 1u ? mox__trace_batch_key(k % 7u + 1u, k) : 4096u + 8u * k;
        switch (next_random(&r) % 3u) {
        case 0:
            assert_true(mox__trace_spans_add(&s, key));
            count += !in[k];
            in[k] = true;
            break;
        case 1:
            mox__trace_spans_remove(&s, key);
            count -= in[k];
            in[k] = false;
            break;
        default:
            break;
        }
        assert_int_equal(s.count, count);
        if (step % 1000 == 0)
            for (uint64_t j = 0; j < KEYS; j++) {
                uint64_t kj = j & 1u ? mox__trace_batch_key(j % 7u + 1u, j) : 4096u + 8u * j;
                if (mox__trace_spans_has(&s, kj) != in[j])
                    fail_msg("step %ld: key %llu is %s", step, (unsigned long long)j, in[j] ? "lost" : "there");
            }
        else
            assert_int_equal(mox__trace_spans_has(&s, key), in[k]);
    }
    mox__trace_spans_clear(&s);
    assert_int_equal(s.count, 0);
    assert_false(mox__trace_spans_has(&s, 4096u));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matches_a_plain_set),
    };
    return cmocka_run_group_tests_name("trace_spans", tests, NULL, NULL);
}
