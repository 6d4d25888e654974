// Probe: does a chain of 64 dependent tiny kernels in one CUDA graph run
// faster with programmatic edges when the graph is launched once and waited
// (mox's dispatch-seq-64), as it does when graphs are launched back to back
// (pdl_chain_probe.cu)? Graphs built as mox builds them: driver API,
// CUDA_KERNEL_NODE_PARAMS_v1 nodes added without dependencies, then edges
// with cuGraphAddDependencies_v2 and edge data; kernels take a 48-byte
// struct first (mox_gate's size) and start with griddepcontrol.wait. Also
// the runtime API's own construction, for comparison. Each case: median host
// wall time of launch + spin on an event (single), and GPU time per graph of
// 200 graphs back to back (pipelined).
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>
#include <algorithm>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)
#define CD(x) do { CUresult e_ = (x); if (e_ != CUDA_SUCCESS) { const char *s_ = 0; cuGetErrorName(e_, &s_); printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); exit(1);} } while (0)

struct gate48 { void *a, *b, *c; unsigned d, e, f[4]; };
static_assert(sizeof(gate48) == 48, "gate48");

extern "C" __global__ void __launch_bounds__(256) step_gate(gate48 g, const float *in, float *out, unsigned n, float a) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  (void)g;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = in[i] * a + 1.0f; }

enum { DEFAULT, PROG, ORDER, DEFAULT2, ORDER2, MODES };
static const char *mode_names[MODES] = {"default edges", "programmatic (PROGRAMMATIC port)", "programmatic (LAUNCH_ORDER port)",
                                        "default, + edge from k-2", "LAUNCH_ORDER, + edge from k-2"};

static double now_us() { timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3; }

struct chain_args { gate48 g; float *in, *out; unsigned n; float a; };

static CUgraphExec build_driver(int mode, int len, CUfunction fn, std::vector<chain_args> &args) {
  CUgraph g; CD(cuGraphCreate(&g, 0));
  std::vector<CUgraphNode> nodes(len);
  for (int k = 0; k < len; k++) {
    void *params[] = {&args[k].g, &args[k].in, &args[k].out, &args[k].n, &args[k].a};
    CUDA_KERNEL_NODE_PARAMS_v1 kp; memset(&kp, 0, sizeof kp);
    kp.func = fn; kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1; kp.blockDimX = 256; kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = params;
    bool prog = mode != DEFAULT && mode != DEFAULT2;
    CD(cuGraphAddKernelNode((CUgraphNode *)&nodes[k], g, NULL, 0, (const CUDA_KERNEL_NODE_PARAMS *)&kp));
    // Edges as mox records a ping-pong chain: from k-1 (read after write)
    // and, in the "+ edge from k-2" modes, from k-2 too (write after write,
    // implied by the path through k-1).
    int from_cnt = k == 0 ? 0 : (mode == DEFAULT2 || mode == ORDER2) && k >= 2 ? 2 : 1;
    if (from_cnt) {
      CUgraphNode from[2] = {nodes[k - 1], k >= 2 ? nodes[k - 2] : nodes[k - 1]}, to[2] = {nodes[k], nodes[k]};
      CUgraphEdgeData ed[2]; memset(ed, 0, sizeof ed);
      for (int e = 0; e < 2 && prog; e++) {
        ed[e].type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
        ed[e].from_port = mode == PROG ? CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC : CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER;
      }
      CD(cuGraphAddDependencies(g, from, to, ed, from_cnt));
    }
  }
  CUgraphExec ex; CD(cuGraphInstantiateWithFlags(&ex, g, 0)); return ex;
}

static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 400;
  CK(cudaFree(0));
  CUfunction fn; CK(cudaGetFuncBySymbol((cudaFunction_t *)&fn, (const void *)step_gate));
  CUstream s; CD(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUevent spin, e0, e1; CD(cuEventCreate(&spin, CU_EVENT_DISABLE_TIMING)); CD(cuEventCreate(&e0, 0)); CD(cuEventCreate(&e1, 0));
  unsigned n = 256; float *x, *y; CK(cudaMalloc(&x, 4 * n)); CK(cudaMalloc(&y, 4 * n));
  for (int len : {2, 8, 64}) {
    std::vector<chain_args> args(len);
    for (int k = 0; k < len; k++) { memset(&args[k].g, 0, sizeof args[k].g); args[k].in = (k % 2) ? y : x; args[k].out = (k % 2) ? x : y; args[k].n = n; args[k].a = (k % 2) ? 0.5f : 2.0f; }
    for (int m = 0; m < MODES; m++) {
      CUgraphExec ex = build_driver(m, len, fn, args);
      std::vector<double> single, launch;
      for (int r = 0; r < reps + 50; r++) {
        double t0 = now_us();
        CD(cuGraphLaunch(ex, s));
        double t1 = now_us();
        CD(cuEventRecord(spin, s));
        CUresult q; while ((q = cuEventQuery(spin)) == CUDA_ERROR_NOT_READY) {}
        CD(q);
        if (r >= 50) { single.push_back(now_us() - t0); launch.push_back(t1 - t0); }
      }
      float best = 1e30f;
      for (int round = 0; round < 5; round++) {
        CD(cuEventRecord(e0, s));
        for (int r = 0; r < 200; r++) CD(cuGraphLaunch(ex, s));
        CD(cuEventRecord(e1, s)); CD(cuEventSynchronize(e1));
        float ms; CD(cuEventElapsedTime(&ms, e0, e1)); best = std::min(best, ms);
      }
      printf("chain=%-3d %-34s cuGraphLaunch %6.2f us  single %8.2f us (%.3f per kernel)   pipelined %8.2f us per graph (%.3f per kernel)\n", len, mode_names[m],
             median(launch), median(single), median(single) / len, 1000.0 * best / 200, 1000.0 * best / 200 / len);
      CD(cuGraphExecDestroy(ex));
    }
  }
  // The driver's own idle cost in a process without mox (compare with
  // cuda_overhead's idle lines): the context open, nothing in flight.
  for (int sec = 1; sec <= 3; sec++) {
    rusage a, b; getrusage(RUSAGE_SELF, &a); sleep(1); getrusage(RUSAGE_SELF, &b);
    double us = (b.ru_utime.tv_sec - a.ru_utime.tv_sec) * 1e6 + (b.ru_utime.tv_usec - a.ru_utime.tv_usec) +
                (b.ru_stime.tv_sec - a.ru_stime.tv_sec) * 1e6 + (b.ru_stime.tv_usec - a.ru_stime.tv_usec);
    printf("idle second %d (raw CUDA process): %.2f ms CPU\n", sec, us / 1e3);
  }
  printf("probe done\n");
  return 0;
}
