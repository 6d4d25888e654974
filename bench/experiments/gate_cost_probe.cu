// Probe: what the failure gate of a generated entry costs a bandwidth
// kernel (vec-add, 2^26 floats, one element per thread, blocks of 256), and
// which way of reading the dependency's status word costs least. Every
// variant reads one settled status word (the dependency, OK) and returns
// early when it is not OK; "loads first" is a bound, not a usable gate: it
// issues the body's loads before the check (moxc cannot move a user's loads
// above the gate).
//   build: nvcc -O3 -gencode arch=compute_90,code=sm_90 -o gate_cost gate_cost_probe.cu
//   run:   ./gate_cost [reps]
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
// Today's gate: every thread, read-only path.
extern "C" __global__ void __launch_bounds__(256) v_ldg(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  if (g.status && __ldg(&g.status[2 * g.dep])) return;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; BODY(i); }
// Every thread, an ordinary (L1-cached) load.
extern "C" __global__ void __launch_bounds__(256) v_ld(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  if (g.status && g.status[2 * g.dep]) return;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; BODY(i); }
// Lane 0 of each warp loads, the warp shares it.
extern "C" __global__ void __launch_bounds__(256) v_warp(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  if (g.status) { unsigned w = 0; if ((threadIdx.x & 31) == 0) w = __ldg(&g.status[2 * g.dep]); if (__shfl_sync(~0u, w, 0)) return; }
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; BODY(i); }
// Thread 0 of each block loads into shared memory, a barrier shares it.
extern "C" __global__ void __launch_bounds__(256) v_block(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  __shared__ unsigned s;
  if (g.status) { if (threadIdx.x == 0) s = __ldg(&g.status[2 * g.dep]); __syncthreads(); if (s) return; }
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; BODY(i); }
// The status word through the constant cache (ld.const of a generic address is not possible; a
// __constant__ copy would need a host write): uniform load hint via ld.global.nc.L1::evict_last.
extern "C" __global__ void __launch_bounds__(256) v_evict_last(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  if (g.status) { unsigned w; asm volatile("ld.global.nc.L1::evict_last.u32 %0, [%1];" : "=r"(w) : "l"(g.status + 2 * g.dep)); if (w) return; }
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; BODY(i); }
// Bound: the body's loads before the check.
extern "C" __global__ void __launch_bounds__(256) v_loads_first(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; float a = 0, b = 0; if (i < n) { a = x[i]; b = y[i]; }
  if (g.status && __ldg(&g.status[2 * g.dep])) return;
  if (i < n) z[i] = a + b; }
// Two elements per thread (half the threads), today's gate: how much of the cost is per thread.
extern "C" __global__ void __launch_bounds__(256) v_ldg_x2(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  if (g.status && __ldg(&g.status[2 * g.dep])) return;
  unsigned i = blockIdx.x * blockDim.x * 2 + threadIdx.x; BODY(i); BODY(i + blockDim.x); }
extern "C" __global__ void __launch_bounds__(256) v_none_x2(gate g, const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x * 2 + threadIdx.x; BODY(i); BODY(i + blockDim.x); }

typedef void (*kfn)(gate, const float *, const float *, float *, unsigned);
struct variant { const char *name; kfn f; bool gated; int per; };

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 50;
  unsigned n = 1u << 26;
  float *x, *y, *z; unsigned *st;
  CK(cudaMalloc(&x, 4ull * n)); CK(cudaMalloc(&y, 4ull * n)); CK(cudaMalloc(&z, 4ull * n)); CK(cudaMalloc(&st, 64));
  CK(cudaMemset(x, 0, 4ull * n)); CK(cudaMemset(y, 0, 4ull * n)); CK(cudaMemset(st, 0, 64));
  variant vs[] = {{"no gate", v_none, false, 1}, {"per thread __ldg (today)", v_ldg, true, 1}, {"per thread ld.global", v_ld, true, 1},
                  {"per warp, lane 0 + shfl", v_warp, true, 1}, {"per block, thread 0 + barrier", v_block, true, 1},
                  {"per thread ld.nc.L1::evict_last", v_evict_last, true, 1}, {"bound: body loads first", v_loads_first, true, 1},
                  {"x2 no gate", v_none_x2, false, 2}, {"x2 per thread __ldg", v_ldg_x2, true, 2},
                  {"today's code, status NULL", v_ldg, false, 1}};
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
