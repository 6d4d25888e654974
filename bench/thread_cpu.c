/* thread_cpu.c - see thread_cpu.h. */
#define _GNU_SOURCE
#include "thread_cpu.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool bench_thread_cpu_read(bench_thread_cpu *out)
{
    DIR *dir = opendir("/proc/self/task");
    int read = 0;
    char self[32];
    snprintf(self, sizeof self, "%d", (int)gettid());
    *out = (bench_thread_cpu){0, 0, 0};
    for (struct dirent *e; dir && (e = readdir(dir)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], name[64] = "";
        unsigned long long ns = 0;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        bool ours = f && fgets(name, sizeof name, f) && strncmp(name, "mox-", 4) == 0;
        if (f)
            fclose(f);
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        f = fopen(path, "r");
        if (f && fscanf(f, "%llu", &ns) == 1) {
            double ms = (double)ns / 1e6;
            if (ours)
                out->mox_ms += ms;
            else if (strcmp(e->d_name, self) == 0)
                out->self_ms += ms;
            else
                out->other_ms += ms;
            read++;
        }
        if (f)
            fclose(f);
    }
    if (dir)
        closedir(dir);
    return read > 0;
}
