// Probe: gating a bandwidth kernel by (a) an in-kernel check of the
// dependency's status word, (b) a CUDA conditional IF node decided by a
// one-thread kernel; against (c) no gate. Same graph shape otherwise.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)

extern "C" __global__ void producer(unsigned *st, unsigned slot, unsigned value) { st[2*slot] = value; }
extern "C" __global__ void vadd(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }
extern "C" __global__ void vadd_gated(unsigned *st, unsigned dep, unsigned self, const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, unsigned n) {
  if (__ldg(&st[2*dep]) != 0u) { if (blockIdx.x == 0 && threadIdx.x == 0) atomicCAS(&st[2*self], 0u, 2u); return; }
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }
extern "C" __global__ void decide(cudaGraphConditionalHandle h, unsigned *st, unsigned dep, unsigned self) {
  unsigned bad = st[2*dep];
  if (bad) st[2*self] = 2u;
  cudaGraphSetConditional(h, bad == 0u);
}

static cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t *deps, size_t nd, void *fn, unsigned grid, unsigned block, void **args) {
  cudaKernelNodeParams kp; memset(&kp, 0, sizeof kp);
  kp.func = fn; kp.gridDim = dim3(grid); kp.blockDim = dim3(block); kp.kernelParams = args;
  cudaGraphNode_t n; CK(cudaGraphAddKernelNode(&n, g, deps, nd, &kp)); return n;
}

int main(int argc, char **argv) {
  unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : (1u << 26);
  int reps = argc > 2 ? atoi(argv[2]) : 200;
  float *a, *b, *c, *c2; unsigned *st;
  CK(cudaMalloc(&a, 4ull*n)); CK(cudaMalloc(&b, 4ull*n)); CK(cudaMalloc(&c, 4ull*n)); CK(cudaMalloc(&c2, 4ull*n)); CK(cudaMalloc(&st, 64));
  CK(cudaMemset(a, 0, 4ull*n)); CK(cudaMemset(b, 0, 4ull*n)); CK(cudaMemset(st, 0, 64));
  unsigned block = 256, grid = (n + block - 1) / block, zero = 0, slot0 = 0, slot1 = 1;
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraphExec_t ex[3]; cudaGraphNode_t bodyNode = 0, prodNode[3];
  cudaGraph_t gr[3];
  for (int v = 0; v < 3; v++) {
    cudaGraph_t g; CK(cudaGraphCreate(&g, 0)); gr[v] = g;
    void *pa[] = {&st, &slot0, &zero};
    cudaGraphNode_t p = add_kernel(g, NULL, 0, (void *)producer, 1, 1, pa); prodNode[v] = p;
    if (v == 0) { void *va[] = {&a, &b, &c, &n}; add_kernel(g, &p, 1, (void *)vadd, grid, block, va); }
    if (v == 1) { void *va[] = {&st, &slot0, &slot1, &a, &b, &c, &n}; add_kernel(g, &p, 1, (void *)vadd_gated, grid, block, va); }
    if (v == 2) {
      cudaGraphConditionalHandle h; CK(cudaGraphConditionalHandleCreate(&h, g, 0, 0));
      void *da[] = {&h, &st, &slot0, &slot1};
      cudaGraphNode_t d = add_kernel(g, &p, 1, (void *)decide, 1, 1, da);
      cudaGraphNodeParams &cp = *(cudaGraphNodeParams *)calloc(1, sizeof(cudaGraphNodeParams));
      cp.type = cudaGraphNodeTypeConditional; cp.conditional.handle = h; cp.conditional.type = cudaGraphCondTypeIf; cp.conditional.size = 1;
      cudaGraphNode_t cn; CK(cudaGraphAddNode(&cn, g, &d, NULL, 1, &cp));
      cudaGraph_t body = cp.conditional.phGraph_out[0];
      void *va[] = {&a, &b, &c, &n}; bodyNode = add_kernel(body, NULL, 0, (void *)vadd, grid, block, va);
    }
    CK(cudaGraphInstantiate(&ex[v], g, 0));
  }
  const char *names[3] = {"ungated", "in-kernel gate", "conditional IF"};
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  float ms[3][5];
  for (int round = 0; round < 5; round++)
    for (int v = 0; v < 3; v++) {
      for (int w = 0; w < 10; w++) CK(cudaGraphLaunch(ex[v], s));
      CK(cudaEventRecord(e0, s));
      for (int r = 0; r < reps; r++) CK(cudaGraphLaunch(ex[v], s));
      CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
      CK(cudaEventElapsedTime(&ms[v][round], e0, e1));
    }
  for (int v = 0; v < 3; v++) {
    float best = 1e30f; for (int r = 0; r < 5; r++) if (ms[v][r] < best) best = ms[v][r];
    printf("n=%u %-15s per launch %.2f us (best of 5 rounds x %d)  ungated/this %.4f\n", n, names[v], 1000.f*best/reps, reps,
           (double)({float b0=1e30f; for (int r=0;r<5;r++) if (ms[0][r]<b0) b0=ms[0][r]; b0;}) / best);
  }
  // correctness: producer OK -> body runs; producer FAILED -> body skipped, slot1 GATED
  CK(cudaMemset(c, 0xff, 4ull*n)); CK(cudaMemset(st, 0, 64));
  CK(cudaGraphLaunch(ex[2], s)); CK(cudaStreamSynchronize(s));
  float h0; unsigned hs[4]; CK(cudaMemcpy(&h0, c, 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hs, st, 16, cudaMemcpyDeviceToHost));
  printf("ok run: c[0]=%g (want 0) slot1=%u (want 0)\n", h0, hs[2]);
  unsigned one = 1; void *pf[] = {&st, &slot0, &one};
  cudaKernelNodeParams kp; memset(&kp, 0, sizeof kp); kp.func = (void *)producer; kp.gridDim = dim3(1); kp.blockDim = dim3(1); kp.kernelParams = pf;
  CK(cudaGraphExecKernelNodeSetParams(ex[2], prodNode[2], &kp));
  CK(cudaMemset(c, 0xff, 4ull*n)); CK(cudaMemset(st, 0, 64));
  CK(cudaGraphLaunch(ex[2], s)); CK(cudaStreamSynchronize(s));
  unsigned hc; CK(cudaMemcpy(&hc, c, 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hs, st, 16, cudaMemcpyDeviceToHost));
  printf("failed run: c[0]=0x%08x (want ffffffff: skipped) slot1=%u (want 2)\n", hc, hs[2]);
  // update the body node's params (output pointer) in the exec
  void *pok[] = {&st, &slot0, &zero}; kp.kernelParams = pok; CK(cudaGraphExecKernelNodeSetParams(ex[2], prodNode[2], &kp));
  cudaKernelNodeParams bp; memset(&bp, 0, sizeof bp); void *vb[] = {&a, &b, &c2, &n};
  bp.func = (void *)vadd; bp.gridDim = dim3(grid); bp.blockDim = dim3(block); bp.kernelParams = vb;
  cudaError_t ue = cudaGraphExecKernelNodeSetParams(ex[2], bodyNode, &bp);
  printf("update of body node: %s\n", cudaGetErrorString(ue));
  CK(cudaMemset(c2, 0xff, 4ull*n)); CK(cudaMemset(c, 0xff, 4ull*n)); CK(cudaMemset(st, 0, 64));
  CK(cudaGraphLaunch(ex[2], s)); CK(cudaStreamSynchronize(s));
  unsigned hc2; CK(cudaMemcpy(&hc, c, 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(&hc2, c2, 4, cudaMemcpyDeviceToHost));
  printf("after update: c[0]=0x%08x (want ffffffff) c2[0]=0x%08x (want 0)\n", hc, hc2);
  // two instances of one graph, different decisions, launched back to back
  cudaGraphExec_t ex2; CK(cudaGraphInstantiate(&ex2, gr[2], 0));
  unsigned slot2 = 2, slot3 = 3; // instance 2 uses slots 2,3 and fails
  void *pf2[] = {&st, &slot2, &one}; kp.kernelParams = pf2; CK(cudaGraphExecKernelNodeSetParams(ex2, prodNode[2], &kp));
  CK(cudaMemset(c2, 0xff, 4ull*n)); CK(cudaMemset(c, 0xff, 4ull*n)); CK(cudaMemset(st, 0, 64));
  CK(cudaGraphLaunch(ex2, s)); CK(cudaGraphLaunch(ex[2], s)); CK(cudaStreamSynchronize(s));
  CK(cudaMemcpy(&hc, c, 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(&hc2, c2, 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hs, st, 16, cudaMemcpyDeviceToHost));
  printf("two instances: ex2 decide read slot2=%u; c[0]=0x%08x (ex2 writes c, body skipped? slots %u %u %u %u) c2[0]=0x%08x\n", hs[4], hc, hs[0], hs[2], hs[4], hs[6], hc2);
  printf("probe done\n");
  return 0;
}
