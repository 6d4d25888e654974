/* artifact_path.h - where the runtime reads a module's artifact from: the
 * lookup order of docs/moxc.md ("Where the runtime finds an artifact"). */
#ifndef MOX_CORE_ARTIFACT_PATH_H
#define MOX_CORE_ARTIFACT_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include <mox/module.h>

/* Folder name of deployed artifacts, next to the program (or shared
 * library) holding the bindings, and under <prefix>/lib of an install. */
#define MOX__DEPLOY_DIR "mox-artifacts"

/* The artifact directory of `desc`, first that applies: the descriptor's
 * environment variable; `override` (mox_module_set_artifact_dir; may be
 * NULL); <object dir>/mox-artifacts/<fingerprint> and
 * <object dir>/../lib/mox-artifacts/<fingerprint> when they exist (object
 * dir: the folder of the program or shared library that holds `desc`); the
 * recorded build directory when it exists; $MOX_ARTIFACT_ROOT/<fingerprint>
 * when set; else the recorded directory. The fingerprint is the recorded
 * directory's last component. mox__malloc'd; NULL on out of memory. */
char *mox__artifact_locate(const mox_module_desc *desc, const char *override);
/* Whether mox__artifact_locate(desc, override) takes the program's own
 * choice (the environment variable or `override`) rather than looking by
 * fingerprint: only an artifact found by fingerprint must hold that
 * fingerprint (worker.c). */
bool mox__artifact_chosen(const mox_module_desc *desc, const char *override);
/* The fingerprint the bindings look for (the recorded directory's last
 * component): its length, *fp pointing into desc->artifact_dir. */
size_t mox__artifact_fingerprint(const mox_module_desc *desc, const char **fp);

#endif
