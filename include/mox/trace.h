/* mox/trace.h - a timeline of what the runtime does with every op, written
 * as Chrome / Perfetto trace-event JSON (docs/trace.md): construction,
 * recording into batches, module preparation, submission, execution on the
 * device, completion and waker calls, with kernel names and buffer ids.
 * Open the file in https://ui.perfetto.dev or chrome://tracing.
 *
 * Setting MOX_TRACE=<file> in the environment starts a trace when the
 * first device is opened; the file is finished when the program exits (or
 * at mox_trace_stop). Tracing costs one predictable branch per event site
 * while it is off.
 */
#ifndef MOX_TRACE_H
#define MOX_TRACE_H

#include <mox/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts writing the trace to `path` (created or truncated). Process-wide:
 * every device and thread is traced until mox_trace_stop.
 * Codes: MOX_ERR_INVALID_ARGUMENT (NULL or empty path), MOX_ERR_STATE (a
 * trace is already being written; the message names its file), MOX_ERR_IO
 * (the file cannot be created). */
MOX_API mox_status mox_trace_start(const char *path);

/* Stops tracing and completes the file (a JSON array). Events of work still
 * in flight are no longer recorded. Codes: MOX_ERR_STATE (no trace is being
 * written), MOX_ERR_IO (writing or closing the file failed; the message says
 * why, the trace is stopped anyway). */
MOX_API mox_status mox_trace_stop(void);

#ifdef __cplusplus
}
#endif
#endif
