// Probe: dependent kernel chains in one CUDA graph with ordinary edges
// against programmatic edges (PDL), every kernel starting with
// griddepcontrol.wait. Tiny kernels (1 block of 256) and bandwidth ones.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)

extern "C" __global__ void step_wait(const float *in, float *out, unsigned n, float a) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = in[i] * a + 1.0f; }
extern "C" __global__ void step_plain(const float *in, float *out, unsigned n, float a) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = in[i] * a + 1.0f; }

enum { PLAIN, WAIT_DEFAULT, PDL_PROG, PDL_ORDER, MODES };
static const char *names[MODES] = {"default edges, no wait", "default edges + wait", "programmatic (port PROGRAMMATIC)", "programmatic (port LAUNCH_ORDER)"};

static cudaGraphExec_t build(int mode, int len, float *x, float *y, unsigned n, unsigned grid) {
  cudaGraph_t g; CK(cudaGraphCreate(&g, 0));
  std::vector<cudaGraphNode_t> nodes(len);
  std::vector<float> as(len);
  std::vector<void *> bufs(2 * len);
  for (int k = 0; k < len; k++) {
    as[k] = (k % 2) ? 0.5f : 2.0f;
    float *in = (k % 2) ? y : x, *out = (k % 2) ? x : y;
    void *args[] = {&in, &out, &n, &as[k]};
    cudaKernelNodeParams kp; memset(&kp, 0, sizeof kp);
    kp.func = mode == PLAIN ? (void *)step_plain : (void *)step_wait;
    kp.gridDim = dim3(grid); kp.blockDim = dim3(256); kp.kernelParams = args;
    CK(cudaGraphAddKernelNode(&nodes[k], g, NULL, 0, &kp));
    if (k) {
      cudaGraphEdgeData ed; memset(&ed, 0, sizeof ed);
      if (mode == PDL_PROG) { ed.type = cudaGraphDependencyTypeProgrammatic; ed.from_port = cudaGraphKernelNodePortProgrammatic; }
      if (mode == PDL_ORDER) { ed.type = cudaGraphDependencyTypeProgrammatic; ed.from_port = cudaGraphKernelNodePortLaunchCompletion; }
      CK(cudaGraphAddDependencies(g, &nodes[k - 1], &nodes[k], &ed, 1));
    }
  }
  cudaGraphExec_t ex; CK(cudaGraphInstantiate(&ex, g, 0)); return ex;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 200;
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  struct { unsigned n; int len; int reps; } cases[] = {{256, 64, reps}, {256, 2, reps * 4}, {1u << 20, 16, reps}, {1u << 26, 2, reps / 4}};
  for (auto &c : cases) {
    float *x, *y; CK(cudaMalloc(&x, 4ull * c.n)); CK(cudaMalloc(&y, 4ull * c.n));
    unsigned grid = (c.n + 255) / 256;
    std::vector<float> h(c.n), want(c.n);
    for (unsigned i = 0; i < c.n; i++) h[i] = (float)(i % 97) * 0.25f;
    for (int m = 0; m < MODES; m++) {
      cudaGraphExec_t ex = build(m, c.len, x, y, c.n, grid);
      float best = 1e30f;
      for (int round = 0; round < 5; round++) {
        for (int w = 0; w < 5; w++) CK(cudaGraphLaunch(ex, s));
        CK(cudaEventRecord(e0, s));
        for (int r = 0; r < c.reps; r++) CK(cudaGraphLaunch(ex, s));
        CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (ms < best) best = ms;
      }
      // correctness of one launch from known data
      // On s itself: a pageable cudaMemcpy may return before its DMA lands,
      // and the non-blocking stream s does not wait for the legacy stream.
      CK(cudaMemcpyAsync(x, h.data(), 4ull * c.n, cudaMemcpyHostToDevice, s));
      CK(cudaGraphLaunch(ex, s)); CK(cudaStreamSynchronize(s));
      std::vector<float> got(c.n); CK(cudaMemcpy(got.data(), (c.len % 2) ? y : x, 4ull * c.n, cudaMemcpyDeviceToHost));
      for (unsigned i = 0; i < c.n; i++) { float v = h[i]; for (int k = 0; k < c.len; k++) v = v * ((k % 2) ? 0.5f : 2.0f) + 1.0f; want[i] = v; }
      bool ok = memcmp(got.data(), want.data(), 4ull * c.n) == 0;
      printf("n=%-9u chain=%-3d %-34s per graph %9.2f us  per kernel %8.3f us  %s\n", c.n, c.len, names[m],
             1000.f * best / c.reps, 1000.f * best / c.reps / c.len, ok ? "bits ok" : "WRONG");
      CK(cudaGraphExecDestroy(ex));
    }
    CK(cudaFree(x)); CK(cudaFree(y));
  }
  printf("probe done\n");
  return 0;
}
