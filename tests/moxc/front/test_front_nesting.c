/* test_front_nesting.c - moxc and the ABI's one nesting limit: structs
 * nested 22, 23 and 32 deep are accepted and their bindings generated (they
 * used to end in "moxc: out of memory" from 23 levels on); 33 levels are
 * refused at the parameter with the artifact layer's message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "front_test_support.h"
#include "gen.h"

static char dir[256];

/* deep.h with S1{S2 inner;}...S<levels>{float v;} and kernels.c using S1
 * by value and as a buffer element. Returns the source's path. */
static const char *write_sources(int levels)
{
    static char source[300];
    char path[300];
    snprintf(path, sizeof path, "%s/deep%d.h", dir, levels);
    FILE *h = fopen(path, "w");
    assert_non_null(h);
    fprintf(h, "#pragma once\ntypedef struct S%d { float v; } S%d;\n", levels, levels);
    for (int i = levels - 1; i >= 1; i--)
        fprintf(h, "typedef struct S%d { S%d inner; } S%d;\n", i, i + 1, i);
    fclose(h);
    snprintf(source, sizeof source, "%s/kernels%d.c", dir, levels);
    FILE *c = fopen(source, "w");
    assert_non_null(c);
    fprintf(c, "#include <mox/kernel.h>\n#include \"deep%d.h\"\n"
               "MOX_KERNEL void take(S1 value, S1 *items, float *out) { out[0] = 0.0f; }\n", levels);
    fclose(c);
    return source;
}

static front_run parse(int levels)
{
    const char *source = write_sources(levels);
    const char *includes[] = {dir, NULL};
    return front_parse(&source, 1, includes, NULL);
}

static void accepted_and_generated(void **state)
{
    (void)state;
    const int levels[] = {22, 23, 32};
    for (int i = 0; i < 3; i++) {
        front_run run = parse(levels[i]);
        if (!run.ok)
            fail_msg("%d levels refused:\n%s", levels[i], run.diagnostics);
        char *h = moxc_gen_bindings_h(run.module, "deep");
        char *c = moxc_gen_bindings_c(run.module, "deep", "/nonexistent");
        assert_non_null(h);
        assert_non_null(c);
        /* The descriptor embeds the ABI, innermost record included. */
        char innermost[40];
        snprintf(innermost, sizeof innermost, "\\\"name\\\":\\\"S%d\\\"", levels[i]);
        if (!strstr(c, innermost))
            fail_msg("%d levels: the bindings lack %s", levels[i], innermost);
        free(h);
        free(c);
        front_run_free(&run);
    }
}

static void refused_at_33(void **state)
{
    (void)state;
    front_run run = parse(33);
    char source[300];
    snprintf(source, sizeof source, "%s/kernels33.c", dir);
    char *real = front_real(source);
    front_expect_error(&run, real, 3,
                       "kernel take parameter value nests arrays and records more than 32 levels "
                       "deep (record S33 at level 33); the ABI allows at most 32");
    front_expect_error(&run, real, 3,
                       "kernel take parameter items element nests arrays and records more than 32 "
                       "levels deep (record S33 at level 33)");
    free(real);
    front_run_free(&run);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/moxc-nesting-%d", (int)getpid());
    return mkdir(dir, 0700);
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accepted_and_generated),
        cmocka_unit_test(refused_at_33),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
