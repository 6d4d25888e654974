/* trace_json.h - reading a trace file back for the trace tests: loading
 * (it must be one JSON array), finding events by phase, category and name
 * (or id), and checking that async begins and ends pair up and that ids
 * are unique. */
#ifndef MOX_TEST_TRACE_JSON_H
#define MOX_TEST_TRACE_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* The trace in `path`; fails the test unless it is a JSON array. */
json_t *trace_load(const char *path);
/* Events with this phase and category whose name starts with `name`. */
size_t trace_count(const json_t *trace, const char *ph, const char *cat, const char *name);
/* The nth (from 0) such event, borrowed; NULL when there are fewer. */
json_t *trace_find(const json_t *trace, const char *ph, const char *cat, const char *name, size_t nth);
/* Every "b" of the category has one "e" with the same id, after it. */
/* Every "n" event of `cat` lies on a track: a "b" event has its id. */
void trace_check_marks_on_tracks(const json_t *trace, const char *cat);
void trace_check_pairs(const json_t *trace, const char *cat);
/* args.buffers lists `buffer` (by address) with this access. */
bool trace_has_buffer(const json_t *event, const void *buffer, const char *access);
/* No two events of this phase and category share an id (nor, with
 * names_too, a name). */
void trace_check_unique(const json_t *trace, const char *ph, const char *cat, bool names_too);
/* The first event of this phase and category with this id, borrowed; NULL
 * when there is none. */
json_t *trace_find_id(const json_t *trace, const char *ph, const char *cat, const char *id);
/* The event's args.<key> as a string ("" when absent). */
const char *trace_arg(const json_t *event, const char *key);

#endif
