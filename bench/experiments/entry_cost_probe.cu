// Probe: where the generated vec_add entry loses ~3% against the
// hand-written reference (quality suite, 2^26 floats, blocks of 256). The
// kernel body is examples/vec-add's, compiled as moxc compiles a module
// (nvcc -O3 -fmad=false, <mox/kernel.h>); the entries differ only in their
// prologue. The gate is off (status NULL), as for a launch no failure can
// reach, except in the "gated" cases (one inline dependency, OK).
//   build: nvcc -std=c++17 -O3 -fmad=false -gencode arch=compute_90,code=sm_90 -I include \
//          -o entry_cost bench/experiments/entry_cost_probe.cu
//   run:   ./entry_cost [reps]
#include <mox/kernel.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)

__device__ void vec_add(const float *a, const float *b, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        out[i] = a[i] + b[i];
}

extern "C" __global__ void ref(mox_gate g, const float *a, const float *b, float *out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = a[i] + b[i]; }
extern "C" __global__ void ref_restrict(mox_gate g, const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = a[i] + b[i]; }
// As moxc generates it.
extern "C" __global__ void gen(mox_gate mox__gate, const float *__restrict__ p0, const float *__restrict__ p1, float *__restrict__ p2, uint32_t p3) {
  if (mox__gate_enter(&mox__gate)) return;
  vec_add(p0, p1, p2, p3);
  mox__gate_leave(&mox__gate); }
// The body alone (no gate check, no grid wait).
extern "C" __global__ void gen_body(mox_gate mox__gate, const float *__restrict__ p0, const float *__restrict__ p1, float *__restrict__ p2, uint32_t p3) {
  vec_add(p0, p1, p2, p3); }
// The grid wait alone.
extern "C" __global__ void gen_wait_only(mox_gate mox__gate, const float *__restrict__ p0, const float *__restrict__ p1, float *__restrict__ p2, uint32_t p3) {
  mox__grid_dependency_wait();
  vec_add(p0, p1, p2, p3); }
// The gate check without the grid wait.
static __device__ __forceinline__ int gate_no_wait(const mox_gate *g) {
  uint32_t *st = g->status; if (st == NULL) return 0;
  uint32_t n = g->dep_count, bad = 0; if (n == 0) return 0;
  if (g->deps == NULL) { bad |= __ldg(&st[2u * g->inline_deps[0]]); if (n > 1u) bad |= __ldg(&st[2u * g->inline_deps[1]]);
    if (n > 2u) bad |= __ldg(&st[2u * g->inline_deps[2]]); if (n > 3u) bad |= __ldg(&st[2u * g->inline_deps[3]]); }
  else for (uint32_t i = 0; i < n; i++) bad |= __ldg(&st[2u * g->deps[i]]);
  if (bad) { if (mox__linear() == 0u) atomicCAS(&st[2u * g->self], 0u, 2u); return 1; }
  return 0; }
extern "C" __global__ void gen_check_only(mox_gate mox__gate, const float *__restrict__ p0, const float *__restrict__ p1, float *__restrict__ p2, uint32_t p3) {
  if (gate_no_wait(&mox__gate)) return;
  vec_add(p0, p1, p2, p3); }
// One test of dep_count first: nothing else is read when it is zero.
extern "C" __global__ void gen_count_first(mox_gate mox__gate, const float *__restrict__ p0, const float *__restrict__ p1, float *__restrict__ p2, uint32_t p3) {
  mox__grid_dependency_wait();
  if (mox__gate.dep_count != 0u && gate_no_wait(&mox__gate)) return;
  vec_add(p0, p1, p2, p3); }

// The check's rare part out of line, its arguments by value: the entry
// keeps two parameter tests (status, dep_count) on its path.
static __device__ __noinline__ int gate_slow(uint32_t *st, const uint32_t *deps, uint32_t self, uint32_t n,
                                             uint32_t d0, uint32_t d1, uint32_t d2, uint32_t d3) {
  uint32_t bad = 0;
  if (deps == NULL) { bad |= __ldg(&st[2u * d0]); if (n > 1u) bad |= __ldg(&st[2u * d1]);
    if (n > 2u) bad |= __ldg(&st[2u * d2]); if (n > 3u) bad |= __ldg(&st[2u * d3]); }
  else for (uint32_t i = 0; i < n; i++) bad |= __ldg(&st[2u * deps[i]]);
  if (bad) { if (mox__linear() == 0u) atomicCAS(&st[2u * self], 0u, 2u); return 1; }
  return 0; }
extern "C" __global__ void gen_out_of_line(mox_gate g, const float *__restrict__ p0, const float *__restrict__ p1, float *__restrict__ p2, uint32_t p3) {
  mox__grid_dependency_wait();
  if (g.status != NULL && g.dep_count != 0u &&
      gate_slow(g.status, g.deps, g.self, g.dep_count, g.inline_deps[0], g.inline_deps[1], g.inline_deps[2], g.inline_deps[3])) return;
  vec_add(p0, p1, p2, p3); }
// One inline dependency read inline (the common gated case), the rest out of line.
extern "C" __global__ void gen_one_inline(mox_gate g, const float *__restrict__ p0, const float *__restrict__ p1, float *__restrict__ p2, uint32_t p3) {
  mox__grid_dependency_wait();
  if (g.status != NULL && g.dep_count != 0u) {
    if (g.dep_count == 1u && g.deps == NULL) {
      if (__ldg(&g.status[2u * g.inline_deps[0]]) != 0u) { if (mox__linear() == 0u) atomicCAS(&g.status[2u * g.self], 0u, 2u); return; }
    } else if (gate_slow(g.status, g.deps, g.self, g.dep_count, g.inline_deps[0], g.inline_deps[1], g.inline_deps[2], g.inline_deps[3])) return;
  }
  vec_add(p0, p1, p2, p3); }

typedef void (*kfn)(mox_gate, const float *, const float *, float *, unsigned);
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 50;
  unsigned n = 1u << 26;
  float *x, *y, *z;
  CK(cudaMalloc(&x, 4ull * n)); CK(cudaMalloc(&y, 4ull * n)); CK(cudaMalloc(&z, 4ull * n));
  CK(cudaMemset(x, 0, 4ull * n)); CK(cudaMemset(y, 0, 4ull * n));
  struct { const char *name; kfn f; } vs[] = {{"ref (hand-written)", ref}, {"ref, __restrict__", ref_restrict}, {"generated entry", gen},
    {"body alone", gen_body}, {"grid wait + body", gen_wait_only}, {"gate check + body", gen_check_only}, {"wait + count test + body", gen_count_first},
    {"out-of-line check", gen_out_of_line}, {"one dep inline, rest out of line", gen_one_inline},
    {"gated: generated entry", gen}, {"gated: out-of-line check", gen_out_of_line}, {"gated: one dep inline", gen_one_inline},
    {"gated: body alone (no check)", gen_body}};
  const int nv = sizeof vs / sizeof vs[0];
  for (int v = 0; v < nv; v++) { cudaFuncAttributes a; CK(cudaFuncGetAttributes(&a, vs[v].f)); printf("%-28s regs %d\n", vs[v].name, a.numRegs); }
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  mox_gate g = {}, gated = {};
  uint32_t *st; CK(cudaMalloc(&st, 64)); CK(cudaMemset(st, 0, 64));
  gated.status = st; gated.self = 1; gated.dep_count = 1; gated.inline_deps[0] = 0;
  std::vector<std::vector<double>> t(nv);
  for (int round = 0; round < 9; round++)
    for (int v = 0; v < nv; v++) {
      unsigned grid = n / 256;
      mox_gate gv = strncmp(vs[v].name, "gated", 5) == 0 ? gated : g;
      for (int w = 0; w < 3; w++) vs[v].f<<<grid, 256, 0, s>>>(gv, x, y, z, n);
      CK(cudaEventRecord(e0, s));
      for (int r = 0; r < reps; r++) vs[v].f<<<grid, 256, 0, s>>>(gv, x, y, z, n);
      CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
      if (round) t[v].push_back(ms * 1e3 / reps);
    }
  CK(cudaGetLastError());
  double base = 0;
  for (int v = 0; v < nv; v++) {
    std::sort(t[v].begin(), t[v].end()); double med = t[v][t[v].size() / 2]; if (!v) base = med;
    printf("%-28s %8.1f us  ref/this %.3f\n", vs[v].name, med, base / med);
  }
  printf("probe done\n");
  return 0;
}
