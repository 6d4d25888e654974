/* tamper_support.h - copies of a real artifact (the conformance module
 * conf's) to damage, and the checks the tampering tests share. */
#ifndef MOX_TAMPER_SUPPORT_H
#define MOX_TAMPER_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <mox/mox.h>

/* The directory every copy goes under (made at start, removed at exit). */
void tamper_init(void);
void tamper_cleanup(void);

/* A fresh copy of conf's artifact named `name`; returns its directory
 * (static storage: the last four stay valid, as with tamper_path). */
const char *tamper_copy(const char *name);
/* Another module's artifact (conf2), for swapped files. */
const char *tamper_other_artifact(void);
/* <dir>/<file> in static storage (the last four results stay valid). */
const char *tamper_path(const char *dir, const char *file);

void *tamper_read(const char *path, size_t *size);
void tamper_write(const char *path, const void *data, size_t size);
/* Rewrites <dir>/manifest.json from the original with every file hash
 * recomputed from the files now in `dir` (a tamperer covering tracks). */
void tamper_rehash(const char *dir);

/* Prepares conf from `dir` on a new device; the status must be `code` and
 * the message contain `text`. */
void tamper_expect(const char *dir, mox_status code, const char *text);

#endif
