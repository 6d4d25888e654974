/* self.c - where moxc itself lives, and the dialect headers relative to it.
 * An installed moxc (<prefix>/bin/moxc) uses <prefix>/include; the build
 * tree mirrors that layout (<build>/bin/moxc, <build>/include linking to the
 * source tree's include/), so no absolute path is compiled in and a moved
 * install prefix keeps working. */
#include <stdlib.h>
#include <string.h>

#include "build.h"

/* The include directory relative to the directory holding moxc (CMake
 * computes it from the install dirs). */
#ifndef MOXC_INCLUDE_FROM_BIN
#define MOXC_INCLUDE_FROM_BIN "../include"
#endif

char *moxc_self_path(void)
{
    return realpath("/proc/self/exe", NULL);
}

char *moxc_default_mox_include(void)
{
    char *self = moxc_self_path();
    char *slash = self ? strrchr(self, '/') : NULL;
    if (!slash) {
        free(self);
        return NULL;
    }
    *slash = '\0';
    char *joined = moxc_path_join(self, MOXC_INCLUDE_FROM_BIN);
    free(self);
    if (!joined)
        return NULL;
    char *abs = moxc_abs_path(joined); /* resolves the "..", when it exists */
    free(joined);
    return abs;
}
