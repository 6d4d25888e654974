/* artifact_copy.h - test tooling for the vec-add example: copies a kernel
 * artifact directory and damages the copy in the ways a loader must catch
 * (a flipped byte, an unknown ABI version, an ABI that no longer matches
 * the generated bindings). The original artifact is never touched. */
#ifndef VEC_ADD_ARTIFACT_COPY_H
#define VEC_ADD_ARTIFACT_COPY_H

#include <stddef.h>
#include <stdint.h>

/* Copies every regular file of `src` into a fresh temporary directory whose
 * path is written to dst (cap bytes). Returns 0 or -1 (message on stderr). */
int artifact_copy(const char *src, char *dst, size_t cap);
/* Removes the files of a copy made by artifact_copy, then the directory. */
void artifact_remove(const char *dir);

/* Writes into name (cap bytes) the file name the manifest gives for the CPU
 * shared object (cuda = 0) or the fatbin (cuda = 1). Returns 0, or -1 when
 * the manifest has no such file. */
int artifact_backend_file(const char *dir, int cuda, char *name, size_t cap);
/* Inverts the bits of the byte in the middle of dir/name. */
int artifact_flip_byte(const char *dir, const char *name);
/* Rewrites manifest.json with abi.version = version; everything else,
 * hashes included, stays as it was. */
int artifact_set_abi_version(const char *dir, long version);
/* Gives kernel `kernel` a required block in the manifest's ABI and makes the
 * copy self-consistent again (abi.json, its hash and abi_sha256 updated), so
 * the only thing wrong with it is that it no longer matches the bindings. */
int artifact_require_block(const char *dir, const char *kernel, uint32_t x, uint32_t y, uint32_t z);

#endif
