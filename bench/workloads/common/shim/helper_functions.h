/* helper_functions.h (shim) - stands in for cuda-samples' Common/
 * helper_functions.h (see helper_cuda.h in this folder): the command-line
 * helpers and MIN/MAX that FDTD3d's host code names. Never called. */
#ifndef MOX_WORKLOADS_SHIM_HELPER_FUNCTIONS_H
#define MOX_WORKLOADS_SHIM_HELPER_FUNCTIONS_H

#ifndef MIN
#define MIN(a, b) (a < b ? a : b)
#endif
#ifndef MAX
#define MAX(a, b) (a > b ? a : b)
#endif

inline bool checkCmdLineFlag(const int argc, const char **argv, const char *flag)
{
    (void)argc;
    (void)argv;
    (void)flag;
    return false;
}

inline int getCmdLineArgumentInt(const int argc, const char **argv, const char *name)
{
    (void)argc;
    (void)argv;
    (void)name;
    return 0;
}

#endif
