/* wl_registry.c - every public-sample port in bench/workloads, in the
 * order the benchmark runs them (see wl.h). */
#include <string.h>

#include "wl.h"

extern const wl_workload wl_blackscholes, wl_sobol, wl_fdtd3d, wl_binomial, wl_mergesort, wl_nbody;

const wl_workload *const wl_ports[] = {
    &wl_blackscholes, &wl_sobol, &wl_fdtd3d, &wl_binomial, &wl_mergesort, &wl_nbody,
};
const size_t wl_port_count = sizeof wl_ports / sizeof wl_ports[0];

const wl_workload *wl_port_find(const char *name)
{
    for (size_t i = 0; i < wl_port_count; i++)
        if (strcmp(wl_ports[i]->name, name) == 0)
            return wl_ports[i];
    return NULL;
}
