/* gate_variants_harness.c - times generated kernel entries from separate
 * cubins (driver API) on the same buffers, interleaved, and checks each
 * gated one behind a failed dependency (it must end GATED and store
 * nothing, with n as given and with n = 0). Arguments:
 * LABEL=CUBIN:FUNC:KIND:GATED ...; KIND vadd (gate, a, b, out, n), reduce
 * (gate, in, out, n) or scan0 (gate, in, prefix, totals, n); GATED 1 arms
 * a gate with one inline dependency (OK while timing). 2^26 elements,
 * blocks of 256, 7 rounds of 50 launches. Built and run by
 * gate_variants.sh. */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_; cuGetErrorName(r_, &s_); \
  printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)
typedef struct { uint32_t *status; const uint32_t *deps; uint32_t *host_flag; uint32_t self, dep_count, inline_deps[4]; } gate_t;
typedef struct { char label[64]; CUfunction f; int kind, gated, regs; double us[16]; } variant;
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv) {
  int reps = 50, rounds = 7;
  unsigned n = 1u << 26;
  CK(cuInit(0)); CUdevice d; CK(cuDeviceGet(&d, 0)); CUcontext c; CK(cuDevicePrimaryCtxRetain(&c, d)); CK(cuCtxSetCurrent(c));
  variant *v = calloc(argc, sizeof *v); int nv = 0;
  for (int i = 1; i < argc; i++) {
    char buf[512]; snprintf(buf, sizeof buf, "%s", argv[i]);
    char *eq = strchr(buf, '='), *file = eq + 1, *fn = strchr(file, ':'); *eq = 0; *fn++ = 0;
    char *kind = strchr(fn, ':'); *kind++ = 0; char *g = strchr(kind, ':'); *g++ = 0;
    CUmodule m; CK(cuModuleLoad(&m, file)); CK(cuModuleGetFunction(&v[nv].f, m, fn));
    snprintf(v[nv].label, sizeof v[nv].label, "%s", buf);
    v[nv].kind = !strcmp(kind, "vadd") ? 0 : !strcmp(kind, "reduce") ? 1 : 2; v[nv].gated = atoi(g);
    cuFuncGetAttribute(&v[nv].regs, CU_FUNC_ATTRIBUTE_NUM_REGS, v[nv].f); nv++;
  }
  CUdeviceptr x, y, z, st; CK(cuMemAlloc(&x, 4ull * n)); CK(cuMemAlloc(&y, 4ull * n)); CK(cuMemAlloc(&z, 4ull * n)); CK(cuMemAlloc(&st, 4096));
  CK(cuMemsetD32(x, 1, n)); CK(cuMemsetD32(y, 2, n)); CK(cuMemsetD32(st, 0, 1024));
  CUstream s; CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)); CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0));
  for (int r = -1; r < rounds; r++)
    for (int k = 0; k < nv; k++) {
      gate_t gt; memset(&gt, 0, sizeof gt);
      if (v[k].gated) { gt.status = (uint32_t *)(uintptr_t)st; gt.self = 1; gt.dep_count = 1; }
      void *pv[] = {&gt, &x, &y, &z, &n}, *pr[] = {&gt, &x, &z, &n};
      void **p = v[k].kind == 0 || v[k].kind == 2 ? pv : pr;
      CK(cuEventRecord(e0, s));
      for (int i = 0; i < reps; i++) CK(cuLaunchKernel(v[k].f, n / 256, 1, 1, 256, 1, 1, 0, s, p, NULL));
      CK(cuEventRecord(e1, s)); CK(cuEventSynchronize(e1));
      float ms; CK(cuEventElapsedTime(&ms, e0, e1));
      if (r >= 0) v[k].us[r] = 1000.0 * ms / reps;
    }
  /* A bad gate (dependency FAILED): the dispatch must end GATED, with
   * n as given and with n = 0 (no thread reaches a guard), and write nothing. */
  for (int k = 0; k < nv; k++) {
    if (!v[k].gated) continue;
    for (int zero = 0; zero < 2; zero++) {
      unsigned init[4] = {1, 0, 0, 0}; CK(cuMemcpyHtoD(st, init, sizeof init));
      CK(cuMemsetD32(z, 0xdeadbeef, 1024)); CK(cuMemsetD32(y, 0xdeadbeef, 1024));
      gate_t gt; memset(&gt, 0, sizeof gt); gt.status = (uint32_t *)(uintptr_t)st; gt.self = 1; gt.dep_count = 1;
      unsigned nn = zero ? 0 : n;
      void *pv[] = {&gt, &x, &y, &z, &nn}, *pr[] = {&gt, &x, &z, &nn};
      void **p = v[k].kind == 0 || v[k].kind == 2 ? pv : pr;
      CK(cuLaunchKernel(v[k].f, zero ? 4 : n / 256, 1, 1, 256, 1, 1, 0, s, p, NULL)); CK(cuStreamSynchronize(s));
      unsigned got[4], zz[1024], yy[1024]; CK(cuMemcpyDtoH(got, st, sizeof got)); CK(cuMemcpyDtoH(zz, z, sizeof zz)); CK(cuMemcpyDtoH(yy, y, sizeof yy));
      int untouched = 1; for (int i = 0; i < 1024; i++) untouched &= zz[i] == 0xdeadbeefu && (v[k].kind != 2 || yy[i] == 0xdeadbeefu);
      printf("bad gate %-32s n=%-9u self %u (%s), outputs %s\n", v[k].label, nn, got[2], got[2] == 2 ? "GATED, ok" : "WRONG",
             untouched ? "untouched, ok" : "WRITTEN: WRONG");
    }
  }
  CK(cuMemsetD32(st, 0, 1024));
  unsigned word[4]; CK(cuMemcpyDtoH(word, st, sizeof word));
  printf("status words after: %u %u %u %u (expect 0: nothing gated)\n", word[0], word[1], word[2], word[3]);
  double base[3] = {0, 0, 0};
  for (int k = 0; k < nv; k++) { qsort(v[k].us, rounds, sizeof(double), cmp); if (!base[v[k].kind]) base[v[k].kind] = v[k].us[rounds / 2]; }
  for (int k = 0; k < nv; k++)
    printf("%-40s regs %3d  median %8.1f us  min %8.1f  max %8.1f  first-of-kind/this %.3f\n", v[k].label, v[k].regs,
           v[k].us[rounds / 2], v[k].us[0], v[k].us[rounds - 1], base[v[k].kind] / v[k].us[rounds / 2]);
  return 0;
}
