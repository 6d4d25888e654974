/* nvtx_inject.c - a stand-in for an NVTX tool such as Nsight Systems: an
 * injection library (NVTX_INJECTION64_PATH) that writes every range start,
 * range end and mark it receives to the file named by MOX_NVTX_TEST_LOG,
 * one line each ("start <label>", "end <label>", "mark <text>"), so the
 * trace tests can check what mox sends to NVTX. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#define MAX_RANGES 1024

static FILE *out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *labels[MAX_RANGES + 1];
static nvtxRangeId_t next_id = 1;

static void put(const char *what, const char *text)
{
    pthread_mutex_lock(&lock);
    fprintf(out, "%s %s\n", what, text);
    fflush(out);
    pthread_mutex_unlock(&lock);
}

static void mark(const char *text) { put("mark", text); }

static nvtxRangeId_t range_start(const char *text)
{
    pthread_mutex_lock(&lock);
    nvtxRangeId_t id = next_id <= MAX_RANGES ? next_id++ : 0;
    if (id)
        labels[id] = strdup(text);
    pthread_mutex_unlock(&lock);
    put("start", text);
    return id;
}

static void range_end(nvtxRangeId_t id)
{
    pthread_mutex_lock(&lock);
    char *text = id && id <= MAX_RANGES ? labels[id] : NULL;
    if (text)
        labels[id] = NULL;
    pthread_mutex_unlock(&lock);
    put("end", text ? text : "(unknown range)");
    free(text);
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table);

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
    const char *path = getenv("MOX_NVTX_TEST_LOG");
    const NvtxExportTableCallbacks *callbacks = get_table(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!path || !(out = fopen(path, "w")) || !callbacks ||
        !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) || size <= NVTX_CBID_CORE_RangeEnd)
        return 0;
    *table[NVTX_CBID_CORE_MarkA] = (NvtxFunctionPointer)mark;
    *table[NVTX_CBID_CORE_RangeStartA] = (NvtxFunctionPointer)range_start;
    *table[NVTX_CBID_CORE_RangeEnd] = (NvtxFunctionPointer)range_end;
    return 1;
}
