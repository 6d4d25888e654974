/* artifact_path.c - the artifact lookup order (artifact_path.h). The
 * bindings record an absolute build directory; a deployed program carries
 * its artifacts with it instead (moxc deploy, mox_install_kernels), found
 * relative to the file that holds the bindings, so that nothing at run time
 * needs the build tree. Deployed copies are named by fingerprint, so a
 * stale copy of other kernels is never picked up. */
#include "artifact_path.h"

#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"

static bool is_dir(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "<a>/<b>/<c>" (b may be ""), mox__malloc'd. */
static char *join3(const char *a, const char *b, const char *c, size_t c_len)
{
    size_t n = strlen(a) + strlen(b) + c_len + 3;
    char *p = mox__malloc(n);
    if (p)
        snprintf(p, n, "%s/%s%s%.*s", a, b, *b ? "/" : "", (int)c_len, c);
    return p;
}

/* The folder of the program or shared library whose image holds `address`
 * (the main program has an empty name in the link map: /proc/self/exe).
 * mox__malloc'd; NULL when unknown or out of memory. */
static char *object_dir(const void *address)
{
    Dl_info info;
    struct link_map *map = NULL;
    const char *name = "/proc/self/exe";
    if (dladdr1(address, &info, (void **)&map, RTLD_DL_LINKMAP) && map && map->l_name && map->l_name[0])
        name = map->l_name;
    char *real = realpath(name, NULL);
    char *slash = real ? strrchr(real, '/') : NULL;
    char *dir = NULL;
    if (slash) {
        *slash = '\0';
        dir = mox__str_dup(*real ? real : "/");
    }
    free(real);
    return dir;
}

/* The deployed copies: <object dir>/mox-artifacts/<fp>, then
 * <object dir>/../lib/mox-artifacts/<fp>. *oom tells a failed allocation
 * from "none exists". */
static char *find_deployed(const mox_module_desc *desc, const char *fp, size_t fp_len, bool *oom)
{
    char *dir = object_dir(desc);
    if (!dir)
        return NULL;
    static const char *const places[] = {MOX__DEPLOY_DIR, "../lib/" MOX__DEPLOY_DIR};
    char *found = NULL;
    for (size_t i = 0; i < sizeof places / sizeof places[0] && !found && !*oom; ++i) {
        char *candidate = join3(dir, places[i], fp, fp_len);
        *oom = candidate == NULL;
        if (is_dir(candidate))
            found = candidate;
        else
            mox__free(candidate);
    }
    mox__free(dir);
    return found;
}

bool mox__artifact_chosen(const mox_module_desc *desc, const char *override)
{
    const char *env = desc->artifact_env ? getenv(desc->artifact_env) : NULL;
    return (env && *env) || override;
}

size_t mox__artifact_fingerprint(const mox_module_desc *desc, const char **fp)
{
    const char *recorded = desc->artifact_dir ? desc->artifact_dir : "";
    /* The last path component, ignoring trailing '/'. */
    size_t end = strlen(recorded);
    while (end > 1 && recorded[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && recorded[start - 1] != '/')
        start--;
    *fp = recorded + start;
    return end - start;
}

char *mox__artifact_locate(const mox_module_desc *desc, const char *override)
{
    const char *env = desc->artifact_env ? getenv(desc->artifact_env) : NULL;
    if (env && *env)
        return mox__str_dup(env);
    if (override)
        return mox__str_dup(override);
    const char *recorded = desc->artifact_dir ? desc->artifact_dir : "";
    const char *fp;
    size_t fp_len = mox__artifact_fingerprint(desc, &fp);
    if (fp_len > 0) {
        bool oom = false;
        char *deployed = find_deployed(desc, fp, fp_len, &oom);
        if (deployed || oom)
            return deployed;
    }
    if (is_dir(recorded))
        return mox__str_dup(recorded);
    const char *root = getenv("MOX_ARTIFACT_ROOT");
    if (root && *root)
        return join3(root, "", fp, fp_len);
    return mox__str_dup(recorded);
}
