/* trace_json.c - see trace_json.h. */
#include "trace_json.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

json_t *trace_load(const char *path)
{
    json_error_t err;
    json_t *t = json_load_file(path, 0, &err);
    if (!t)
        fail_msg("%s is not JSON: line %d: %s", path, err.line, err.text);
    assert_true(json_is_array(t));
    return t;
}

static bool matches(const json_t *ev, const char *ph, const char *cat, const char *name)
{
    const char *p = json_string_value(json_object_get(ev, "ph"));
    const char *c = json_string_value(json_object_get(ev, "cat"));
    const char *n = json_string_value(json_object_get(ev, "name"));
    return p && n && strcmp(p, ph) == 0 && (!cat || (c && strcmp(c, cat) == 0)) &&
           strncmp(n, name, strlen(name)) == 0;
}

size_t trace_count(const json_t *trace, const char *ph, const char *cat, const char *name)
{
    size_t i, n = 0;
    json_t *ev;
    json_array_foreach(trace, i, ev) n += matches(ev, ph, cat, name);
    return n;
}

json_t *trace_find(const json_t *trace, const char *ph, const char *cat, const char *name, size_t nth)
{
    size_t i;
    json_t *ev;
    json_array_foreach(trace, i, ev)
    {
        if (matches(ev, ph, cat, name) && nth-- == 0)
            return ev;
    }
    return NULL;
}

void trace_check_pairs(const json_t *trace, const char *cat)
{
    size_t i, j;
    json_t *b, *e;
    json_array_foreach(trace, i, b)
    {
        if (!matches(b, "b", cat, ""))
            continue;
        const char *id = json_string_value(json_object_get(b, "id"));
        assert_non_null(id);
        bool ended = false;
        for (j = i + 1; j < json_array_size(trace) && !ended; j++) {
            e = json_array_get(trace, j);
            const char *eid = json_string_value(json_object_get(e, "id"));
            if (eid && strcmp(eid, id) == 0 && matches(e, "b", cat, ""))
                break; /* begun again before it ended */
            ended = eid && strcmp(eid, id) == 0 && matches(e, "e", cat, "");
            if (ended)
                assert_true(json_number_value(json_object_get(e, "ts")) >= json_number_value(json_object_get(b, "ts")));
        }
        if (!ended)
            fail_msg("a \"%s\" span %s (event %zu) never ends", cat, id, i);
    }
    assert_int_equal(trace_count(trace, "b", cat, ""), trace_count(trace, "e", cat, ""));
}

void trace_check_marks_on_tracks(const json_t *trace, const char *cat)
{
    size_t i, j;
    json_t *n, *b;
    json_array_foreach(trace, i, n)
    {
        if (!matches(n, "n", cat, ""))
            continue;
        const char *id = json_string_value(json_object_get(n, "id"));
        assert_non_null(id);
        bool begun = false;
        json_array_foreach(trace, j, b)
        {
            const char *bid = json_string_value(json_object_get(b, "id"));
            begun = begun || (bid && strcmp(bid, id) == 0 && matches(b, "b", cat, ""));
        }
        if (!begun)
            fail_msg("a \"%s\" mark '%s' (event %zu) on %s, which no span begins",
                     cat, json_string_value(json_object_get(n, "name")), i, id);
    }
}

bool trace_has_buffer(const json_t *event, const void *buffer, const char *access)
{
    char want[32];
    snprintf(want, sizeof want, "%p", buffer);
    json_t *list = json_object_get(json_object_get(event, "args"), "buffers");
    size_t i;
    json_t *b;
    json_array_foreach(list, i, b)
    {
        const char *id = json_string_value(json_object_get(b, "id"));
        const char *acc = json_string_value(json_object_get(b, "access"));
        if (id && acc && strcmp(id, want) == 0 && strcmp(acc, access) == 0)
            return true;
    }
    return false;
}

const char *trace_arg(const json_t *event, const char *key)
{
    const char *v = json_string_value(json_object_get(json_object_get(event, "args"), key));
    return v ? v : "";
}

static const char *str(const json_t *ev, const char *key)
{
    const char *v = json_string_value(json_object_get(ev, key));
    return v ? v : "";
}

void trace_check_unique(const json_t *trace, const char *ph, const char *cat, bool names_too)
{
    size_t n = json_array_size(trace);
    for (size_t i = 0; i < n; i++) {
        const json_t *a = json_array_get(trace, i);
        if (!matches(a, ph, cat, ""))
            continue;
        for (size_t j = i + 1; j < n; j++) {
            const json_t *b = json_array_get(trace, j);
            if (!matches(b, ph, cat, ""))
                continue;
            if (strcmp(str(a, "id"), str(b, "id")) == 0)
                fail_msg("events %zu and %zu (\"%s\" \"%s\") have the id %s", i, j, ph, cat, str(a, "id"));
            if (names_too && strcmp(str(a, "name"), str(b, "name")) == 0)
                fail_msg("events %zu and %zu (\"%s\" \"%s\") are named %s", i, j, ph, cat, str(a, "name"));
        }
    }
}

json_t *trace_find_id(const json_t *trace, const char *ph, const char *cat, const char *id)
{
    size_t i;
    json_t *ev;
    json_array_foreach(trace, i, ev)
    {
        if (matches(ev, ph, cat, "") && strcmp(str(ev, "id"), id) == 0)
            return ev;
    }
    return NULL;
}
