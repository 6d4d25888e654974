/* errors.c - internal error construction: context in messages, cause
 * chains, the immortal out-of-memory error, per-thread last errors freed
 * with their thread; the status list, its names and docs/errors.md agree. */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/error.h"
#include "core/testing.h"

static void messages_carry_context_and_cause(void **state)
{
    (void)state;
    mox_error *root = mox__error_create(MOX_ERR_KERNEL_FAILED, "k1", 7, NULL, "kernel '%s' failed: mox_fail(%u)", "k1", 7u);
    mox_error *gated = mox__error_create(MOX_ERR_GATED, "k2", 7, root, "kernel '%s' did not run", "k2");
    mox_error_release(root); /* the gated error keeps its cause alive */
    assert_string_equal(mox_error_message(gated), "kernel 'k2' did not run: kernel 'k1' failed: mox_fail(7)");
    assert_string_equal(mox_error_kernel(gated), "k2");
    assert_int_equal(mox_error_fail_code(gated), 7);
    const mox_error *cause = mox_error_cause(gated);
    assert_int_equal(mox_error_code(cause), MOX_ERR_KERNEL_FAILED);
    assert_string_equal(mox_error_kernel(cause), "k1");
    assert_null(mox_error_cause(cause));
    mox_error_release(gated);
}

static void long_messages_are_kept_whole(void **state)
{
    (void)state;
    char big[1000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    mox_error *e = mox__error_new(MOX_ERR_IO, "%s!", big);
    assert_int_equal(strlen(mox_error_message(e)), sizeof big);
    assert_int_equal(mox_error_message(e)[sizeof big - 1], '!');
    mox_error_release(e);
}

static void out_of_memory_gives_the_immortal_error(void **state)
{
    (void)state;
    mox__testing_fail_alloc_after(0);
    mox_error *e = mox__error_new(MOX_ERR_IO, "lost");
    assert_ptr_equal(e, mox__error_oom());
    assert_int_equal(mox_error_code(e), MOX_ERR_OUT_OF_MEMORY);
    mox_error_release(e); /* no-op */
    mox_error_release(e);
    assert_ptr_equal(mox_error_retain(e), e);
    /* mox__raise keeps the caller's code even without memory for text. */
    mox__testing_fail_alloc_after(0);
    assert_int_equal(mox__raise(MOX_ERR_IO, "x"), MOX_ERR_IO);
}

static void *fail_and_exit(void *p)
{
    (void)p;
    mox__raise(MOX_ERR_STATE, "thread-local %d", 1);
    return NULL;
}

static void last_error_freed_with_its_thread(void **state)
{
    (void)state;
    /* Under LeakSanitizer this leaks if the thread's error is not freed. */
    for (int i = 0; i < 4; i++) {
        pthread_t t;
        pthread_create(&t, NULL, fail_and_exit, NULL);
        pthread_join(t, NULL);
    }
    assert_int_equal(mox__raise(MOX_ERR_STATE, "main"), MOX_ERR_STATE);
    assert_string_equal(mox_error_last_message(), "main");
}

/* The status list is one X-macro: every code has its name and a heading of
 * its own in docs/errors.md, so the three cannot drift apart. */
static void every_status_is_named_and_documented(void **state)
{
    (void)state;
    FILE *f = fopen(MOX_DOCS_DIR "/errors.md", "r");
    assert_non_null(f);
    static char doc[1 << 17];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = '\0';
    static const struct {
        mox_status code;
        const char *name;
    } all[] = {
#define ENTRY_(name, value, what) {name, #name},
        MOX_STATUS_MAP(ENTRY_)
#undef ENTRY_
    };
    assert_int_equal(sizeof all / sizeof all[0], MOX_STATUS_COUNT_);
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        assert_int_equal(all[i].code, (mox_status)i);
        assert_string_equal(mox_status_name(all[i].code), all[i].name);
        if (all[i].code == MOX_OK)
            continue;
        char heading[96];
        snprintf(heading, sizeof heading, "\n## %s", all[i].name);
        if (!strstr(doc, heading))
            fail_msg("docs/errors.md has no heading for %s", all[i].name);
    }
    assert_string_equal(mox_status_name(MOX_STATUS_COUNT_), "MOX_STATUS_UNKNOWN");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(messages_carry_context_and_cause),
        cmocka_unit_test(long_messages_are_kept_whole),
        cmocka_unit_test(out_of_memory_gives_the_immortal_error),
        cmocka_unit_test(last_error_freed_with_its_thread),
        cmocka_unit_test(every_status_is_named_and_documented),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
