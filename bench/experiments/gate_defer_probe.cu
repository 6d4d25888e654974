// Probe (gate_defer_probe.cu): the deferred gate check against the check at entry, on a bandwidth
// kernel (vec-add, 2^26 floats, one element per thread, blocks of 256), and
// which way of reading the dependency's status word costs least. Every
// variant reads one settled status word (the dependency, OK) and returns
// early when it is not OK; "loads first" is a bound, not a usable gate: it
// issues the body's loads before the check (moxc cannot move a user's loads
// above the gate).
//   build: nvcc -O3 -gencode arch=compute_90,code=sm_90 -o gate_defer gate_defer_probe.cu
//   run:   ./gate_defer [reps]
#include <cuda_runtime.h>
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)

struct gate { const unsigned *status; unsigned dep; };

#define BODY(i) if ((i) < n) z[i] = x[i] + y[i]
extern "C" __global__ void __launch_bounds__(256) v_none(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; BODY(i); }
extern "C" __global__ void __launch_bounds__(256) v_ldg(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  if (g.status && __ldg(&g.status[2 * g.dep])) return;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; BODY(i); }
extern "C" __global__ void __launch_bounds__(256) v_loads_first(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; float a = 0, b = 0; if (i < n) { a = x[i]; b = y[i]; }
  if (g.status && __ldg(&g.status[2 * g.dep])) return;
  if (i < n) z[i] = a + b; }
// moxc's deferred copy, the status read inline: the store guarded, the loads not.
extern "C" __global__ void __launch_bounds__(256) v_deferred(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  unsigned bad = g.status ? __ldg(&g.status[2 * g.dep]) : 0u;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i] + y[i]; if (!bad) z[i] = v; } }
static __device__ __noinline__ unsigned rare(const unsigned *st, unsigned d) { return __ldg(&st[2 * d]) | __ldg(&st[2 * d + 4]); }
// As mox__gate_peek: parameter tests, one inline load, an out-of-line call for the rare forms.
extern "C" __global__ void __launch_bounds__(256) v_deferred_call(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  unsigned bad = 0;
  if (g.status) bad = g.dep < 100 ? __ldg(&g.status[2 * g.dep]) : rare(g.status, g.dep);
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i] + y[i]; if (!bad) z[i] = v; } }
// The store predicated by a select on the address instead of a branch.
extern "C" __global__ void __launch_bounds__(256) v_deferred_volatile(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  unsigned bad = 0;
  if (g.status) asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(bad) : "l"(g.status + 2 * g.dep));
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i] + y[i]; if (!bad) z[i] = v; } }

// The status read at the guard, after the body's loads (a lazy read).
extern "C" __global__ void __launch_bounds__(256) v_lazy(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i] + y[i]; if (!(g.status && __ldg(&g.status[2 * g.dep]))) z[i] = v; } }
// Loads first, then a guard instead of a return.
extern "C" __global__ void __launch_bounds__(256) v_first_guard(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; float a = 0, b = 0; if (i < n) { a = x[i]; b = y[i]; }
  unsigned bad = g.status ? __ldg(&g.status[2 * g.dep]) : 0u;
  if (i < n && !bad) z[i] = a + b; }
// The lazy read through a pointer computed at entry (NULL: no gate).
struct lazy_gate { const unsigned *word; };
static __device__ __forceinline__ bool gate_bad(const unsigned *w) { return w && __ldg(w); }
extern "C" __global__ void __launch_bounds__(256) v_lazy_ptr(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  const unsigned *w = g.status ? &g.status[2 * g.dep] : NULL;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i] + y[i]; if (!gate_bad(w)) z[i] = v; } }

// The lazy pointer with the rare forms (several dependencies) decided at
// entry: out of line (a call on the path not taken), or inline (a loop).
struct gate4 { const unsigned *status; const unsigned *deps; unsigned n, d0, d1, d2, d3; };
static __device__ const unsigned lazy_words[2] = {0u, 2u};
static __device__ __noinline__ unsigned rare4(const unsigned *st, const unsigned *deps, unsigned n, unsigned d0, unsigned d1, unsigned d2, unsigned d3) {
  unsigned bad = 0; if (!deps) { bad |= __ldg(&st[2 * d0]); if (n > 1) bad |= __ldg(&st[2 * d1]); if (n > 2) bad |= __ldg(&st[2 * d2]); if (n > 3) bad |= __ldg(&st[2 * d3]); }
  else for (unsigned k = 0; k < n; k++) bad |= __ldg(&st[2 * deps[k]]);
  return bad; }
static __device__ __forceinline__ unsigned rare4_inline(const unsigned *st, const unsigned *deps, unsigned n, unsigned d0, unsigned d1, unsigned d2, unsigned d3) {
  unsigned bad = 0; if (!deps) { bad |= __ldg(&st[2 * d0]); if (n > 1) bad |= __ldg(&st[2 * d1]); if (n > 2) bad |= __ldg(&st[2 * d2]); if (n > 3) bad |= __ldg(&st[2 * d3]); }
  else for (unsigned k = 0; k < n; k++) bad |= __ldg(&st[2 * deps[k]]);
  return bad; }
extern "C" __global__ void __launch_bounds__(256) v_ptr_call(gate4 g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  const unsigned *w = NULL;
  if (g.status && g.n) w = (g.n == 1 && !g.deps) ? &g.status[2 * g.d0] : &lazy_words[rare4(g.status, g.deps, g.n, g.d0, g.d1, g.d2, g.d3) != 0];
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i] + y[i]; if (!gate_bad(w)) z[i] = v; } }
extern "C" __global__ void __launch_bounds__(256) v_ptr_inline(gate4 g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  const unsigned *w = NULL;
  if (g.status && g.n) w = (g.n == 1 && !g.deps) ? &g.status[2 * g.d0] : &lazy_words[rare4_inline(g.status, g.deps, g.n, g.d0, g.d1, g.d2, g.d3) != 0];
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i] + y[i]; if (!gate_bad(w)) z[i] = v; } }
// Everything at the guard: the common form's load, the rare forms by a call or inline.
static __device__ __forceinline__ bool bad_call(const gate4 &g) {
  if (!g.status || !g.n) return false;
  if (g.n == 1 && !g.deps) return __ldg(&g.status[2 * g.d0]) != 0;
  return rare4(g.status, g.deps, g.n, g.d0, g.d1, g.d2, g.d3) != 0; }
static __device__ __forceinline__ bool bad_inline(const gate4 &g) {
  if (!g.status || !g.n) return false;
  if (g.n == 1 && !g.deps) return __ldg(&g.status[2 * g.d0]) != 0;
  return rare4_inline(g.status, g.deps, g.n, g.d0, g.d1, g.d2, g.d3) != 0; }
extern "C" __global__ void __launch_bounds__(256) v_guard_call(gate4 g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i] + y[i]; if (!bad_call(g)) z[i] = v; } }
extern "C" __global__ void __launch_bounds__(256) v_guard_inline(gate4 g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i] + y[i]; if (!bad_inline(g)) z[i] = v; } }
typedef void (*kfn4)(gate4, const float *, const float *, float *, unsigned);

typedef void (*kfn)(gate, const float *, const float *, float *, unsigned);
struct variant { const char *name; kfn f; bool gated; int per; };

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 50;
  unsigned n = 1u << 26;
  float *x, *y, *z; unsigned *st;
  CK(cudaMalloc(&x, 4ull * n)); CK(cudaMalloc(&y, 4ull * n)); CK(cudaMalloc(&z, 4ull * n)); CK(cudaMalloc(&st, 64));
  CK(cudaMemset(x, 0, 4ull * n)); CK(cudaMemset(y, 0, 4ull * n)); CK(cudaMemset(st, 0, 64));
  variant vs[] = {{"no gate", v_none, false, 1}, {"check at entry (__ldg)", v_ldg, true, 1},
                  {"bound: body loads first", v_loads_first, true, 1}, {"deferred, inline read", v_deferred, true, 1},
                  {"deferred, read + rare call", v_deferred_call, true, 1}, {"deferred, asm volatile read", v_deferred_volatile, true, 1},
                  {"lazy read at the guard", v_lazy, true, 1}, {"loads first, then a guard", v_first_guard, true, 1},
                  {"lazy read through a pointer", v_lazy_ptr, true, 1}};
  const int nv = sizeof vs / sizeof vs[0];
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  std::vector<std::vector<double>> t(nv);
  for (int round = 0; round < 7; round++)
    for (int v = 0; v < nv; v++) {
      gate g = {vs[v].gated ? st : NULL, 1};
      unsigned grid = (n / vs[v].per + 255) / 256;
      for (int w = 0; w < 3; w++) vs[v].f<<<grid, 256, 0, s>>>(g, x, y, z, n);
      CK(cudaEventRecord(e0, s));
      for (int r = 0; r < reps; r++) vs[v].f<<<grid, 256, 0, s>>>(g, x, y, z, n);
      CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
      if (round) t[v].push_back(ms * 1e3 / reps);
    }
  // The gate4 variants: one inline dependency (the common form), then two (the rare form).
  kfn4 v4[4] = {v_ptr_call, v_ptr_inline, v_guard_call, v_guard_inline};
  const char *n4[4] = {"lazy pointer, rare forms by call", "lazy pointer, rare forms inline",
                       "at the guard, rare forms by call", "at the guard, rare forms inline"};
  for (int deps = 1; deps <= 2; deps++)
    for (int v = 0; v < 4; v++) {
      std::vector<double> tt;
      for (int round = 0; round < 7; round++) {
        gate4 g = {st, NULL, (unsigned)deps, 1, 3, 0, 0};
        unsigned grid = (n + 255) / 256;
        for (int w = 0; w < 3; w++) v4[v]<<<grid, 256, 0, s>>>(g, x, y, z, n);
        CK(cudaEventRecord(e0, s));
        for (int r = 0; r < reps; r++) v4[v]<<<grid, 256, 0, s>>>(g, x, y, z, n);
        CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
        if (round) tt.push_back(ms * 1e3 / reps);
      }
      std::sort(tt.begin(), tt.end());
      printf("%-32s deps=%d %8.1f us\n", n4[v], deps, tt[tt.size() / 2]);
    }
  CK(cudaGetLastError());
  double base = 0;
  for (int v = 0; v < nv; v++) {
    std::sort(t[v].begin(), t[v].end());
    double med = t[v][t[v].size() / 2];
    if (v == 0) base = med;
    printf("%-36s %8.1f us  %7.1f GB/s  no-gate/this %.3f\n", vs[v].name, med, 12.0 * n / med / 1e3, base / med);
  }
  printf("probe done\n");
  return 0;
}
