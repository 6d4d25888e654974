// Probe: why does a lone run of the 16-bin histogram (and mergesort,
// compaction) take ~27% less GPU time than the same run queued behind other
// work? The histogram kernel is the one of examples/cooperation (shared
// atomic bins, then 16 device-wide atomics per block). Each run is timed on
// the GPU with events; sampled blocks record (smid, clock64, globaltimer) at
// their start so the SM clock of each mode is measured, not guessed.
//   build: nvcc -O3 -gencode arch=compute_90,code=sm_90 -o lone_probe lone_run_probe.cu
//   run:   ./lone_probe [reps]
#include <cuda_runtime.h>
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)

#define SAMPLE_EVERY 256u
struct stamp { unsigned long long clk, ns; unsigned sm, pad; };

__device__ __forceinline__ unsigned long long gtimer() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }

extern "C" __global__ void __launch_bounds__(256) hist(const unsigned *values, unsigned *bins, unsigned n, stamp *st) {
  __shared__ unsigned local[16];
  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (st && t == 0 && blockIdx.x % SAMPLE_EVERY == 0) {
    stamp s; s.clk = clock64(); s.ns = gtimer(); s.sm = smid(); s.pad = 0; st[blockIdx.x / SAMPLE_EVERY] = s; }
  if (t < 16) local[t] = 0;
  __syncthreads();
  if (i < n) atomicAdd(&local[values[i] & 15u], 1u);
  __syncthreads();
  if (t < 16 && local[t]) atomicAdd(&bins[t], local[t]);
}
extern "C" __global__ void spin(unsigned long long cycles) { unsigned long long t0 = clock64(); while (clock64() - t0 < cycles) {} }
extern "C" __global__ void empty() {}
// Same SM clock measure with no atomics: a streaming read of the input.
extern "C" __global__ void __launch_bounds__(256) sum(const unsigned *values, unsigned *out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; unsigned v = i < n ? values[i] : 0;
  for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(~0u, v, o);
  if ((threadIdx.x & 31) == 0 && v == 0xdeadbeef) out[0] = v; }

enum { LONE, LONE_EMPTY_FIRST, BEHIND_SPIN, BACK_TO_BACK, GRAPH_LONE, GRAPH_BEHIND_SPIN, LONE_AFTER_SUM, MODES };
static const char *names[MODES] = {"lone (launch, sync)", "lone, an empty kernel first", "behind a 200 us spin kernel",
                                   "back to back (30 runs)", "graph of the kernel, lone", "graph, behind a 200 us spin",
                                   "lone, after a streaming sum kernel"};

static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[v.size() / 2]; }

// SM clock (MHz) from pairs of stamps of the same SM in one run.
static double mhz_of(const std::vector<stamp> &s) {
  std::vector<double> m;
  for (size_t a = 0; a < s.size(); a++)
    for (size_t b = a + 1; b < s.size(); b++)
      if (s[a].sm == s[b].sm && s[b].ns > s[a].ns + 20000) { m.push_back((double)(s[b].clk - s[a].clk) * 1e3 / (double)(s[b].ns - s[a].ns)); break; }
  return median(m);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20;
  unsigned n = 1u << 26, grid = n / 256, nst = grid / SAMPLE_EVERY;
  std::vector<unsigned> h(n);
  for (unsigned i = 0; i < n; i++) h[i] = i * 2654435761u;
  unsigned *v, *bins, *out; stamp *st;
  CK(cudaMalloc(&v, n * 4ull)); CK(cudaMalloc(&bins, 64)); CK(cudaMalloc(&out, 4)); CK(cudaMalloc(&st, nst * sizeof(stamp)));
  CK(cudaMemcpy(v, h.data(), n * 4ull, cudaMemcpyHostToDevice)); CK(cudaMemset(bins, 0, 64));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  cudaGraph_t g; cudaGraphExec_t gx;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  hist<<<grid, 256, 0, s>>>(v, bins, n, st);
  CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&gx, g, 0));
  unsigned long long spin_cycles = 400000ull; // ~200 us at 1.98 GHz
  std::vector<stamp> hs(nst);
  for (int round = 0; round < 3; round++) {
    printf("round %d\n", round);
    for (int m = 0; m < MODES; m++) {
      std::vector<double> gpu, wall, mhz;
      for (int r = 0; r < reps + 2; r++) {
        if (m == LONE_AFTER_SUM) { sum<<<grid, 256, 0, s>>>(v, out, n); CK(cudaStreamSynchronize(s)); }
        cudaEvent_t a0, a1; // wall: host launch to observed completion
        struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
        if (m == BEHIND_SPIN || m == GRAPH_BEHIND_SPIN) spin<<<1, 1, 0, s>>>(spin_cycles);
        if (m == LONE_EMPTY_FIRST) empty<<<1, 1, 0, s>>>();
        CK(cudaEventRecord(e0, s));
        int runs = m == BACK_TO_BACK ? 30 : 1;
        for (int k = 0; k < runs; k++) {
          if (m == GRAPH_LONE || m == GRAPH_BEHIND_SPIN) CK(cudaGraphLaunch(gx, s));
          else hist<<<grid, 256, 0, s>>>(v, bins, n, k == runs - 1 ? st : NULL);
        }
        CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
        clock_gettime(CLOCK_MONOTONIC, &t1);
        (void)a0; (void)a1;
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
        CK(cudaMemcpy(hs.data(), st, nst * sizeof(stamp), cudaMemcpyDeviceToHost));
        if (r >= 2) { gpu.push_back(ms * 1e3 / runs); wall.push_back(((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / runs); mhz.push_back(mhz_of(hs)); }
      }
      printf("  %-36s gpu %8.1f us/run  wall %8.1f us/run  sm clock %6.0f MHz\n", names[m], median(gpu), median(wall), median(mhz));
    }
  }
  CK(cudaGetLastError());
  printf("done\n");
  return 0;
}
