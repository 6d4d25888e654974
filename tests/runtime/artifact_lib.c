/* artifact_lib.c - a shared library holding a module descriptor, for
 * artifact_path.c: the runtime looks for deployed artifacts next to the
 * file that holds the bindings, here this library (built into its own
 * folder, apart from the test program). */
#include <mox/module.h>

__attribute__((visibility("default"))) const mox_module_desc *artifact_lib_desc(const char *recorded);

static mox_module_desc desc = {"libmod", "{}", "", NULL, "MOX_ARTIFACT_LIBMOD", 0, NULL};

const mox_module_desc *artifact_lib_desc(const char *recorded)
{
    desc.artifact_dir = recorded;
    return &desc;
}
