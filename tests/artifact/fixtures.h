/* fixtures.h - ABIs, manifests and text edits shared by the artifact tests. */
#ifndef MOX_TEST_ARTIFACT_FIXTURES_H
#define MOX_TEST_ARTIFACT_FIXTURES_H

#include "abi.h"
#include "manifest.h"

/* Motion{position:[f32;2], velocity:[f32;2]} */
mox_abi_layout *fx_motion(void);
/* Particle{tag:u8, flags:u16, id:u32, motion:Motion, color:[u8;3]} */
mox_abi_layout *fx_particle(void);
/* Config{dt:f32, acceleration:[f32;2]} */
mox_abi_layout *fx_config(void);

/* Three kernels: scale_256 (read/write f32 buffers, u32 value, block 256x1x1),
 * update_particles (Particle buffer, Config value, atomic u32 counter),
 * warp_total (warp ops, i32 atomics). Validates. */
mox_abi *fx_abi(void);
/* fx_abi's canonical JSON (malloc'd). */
char *fx_abi_json(void);

/* Writes a complete artifact (manifest.json plus every file it names, with
 * or without a fatbin) into `dir`, which must exist. */
void fx_write_artifact(const char *dir, bool with_fatbin);
/* Manifest for the artifact fx_write_artifact writes. */
mox_manifest *fx_manifest(bool with_fatbin);

/* Copy of text with the first occurrence of `from` replaced by `to`; fails
 * the test if `from` does not occur. */
char *fx_replace(const char *text, const char *from, const char *to);

/* Makes a fresh temporary directory (malloc'd path); fx_rmdir removes it with
 * its plain files. */
char *fx_tempdir(void);
void fx_rmdir(char *dir);
void fx_write_file(const char *dir, const char *name, const void *data, size_t size);

#endif
