// Probe: some mox_bench processes run every launch + wait ~32 us slower than
// others (docs/performance.md, "Bimodal waits"). Does a plain CUDA program,
// no mox, show it too; does it go with the CPU / NUMA node the process runs
// on; and is it the kernel that starts late or its completion that is seen
// late? A one-warp kernel writes %globaltimer at its start and its end; the
// host reads CLOCK_REALTIME before the launch and after the wait, in three
// modes:
//   stream    kernel launch on a non-blocking stream, event record, spin on
//             cudaEventQuery (the waiting thread of mox spins the same way)
//   graph     one-kernel-node graph instantiated once; per launch the slot
//             argument is set with cudaGraphExecKernelNodeSetParams (as mox
//             does), cudaGraphLaunch, event record, spin
//   blocking  stream launch, event with cudaEventBlockingSync, waited with
//             cudaEventSynchronize
//   build: nvcc -O3 -gencode arch=compute_90,code=sm_90 -o launch_probe launch_latency_probe.cu
//   run:   ./launch_probe [iters]        (bench/experiments/slow_mode_hunt.sh runs it many times)
// Output, all times in us, "med (p10..p90)":
//   probe pid .. cpu START->END cpu_node .. allowed LIST gpu BUSID gpu_node .. ...
//   mode NAME: n .. rt .. submit .. start .. detect .. kern .. sx .. dx .. polls .. migr .. offset [LO, HI]
//   evq ...     (one cudaEventQuery on a completed event)
//   summary pid .. cpu .. | stream rt .. start .. detect .. | graph ... | blocking ... | evq ..
#include <cuda_runtime.h>
#include <ctype.h>
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)

typedef unsigned long long u64;

__device__ __forceinline__ u64 gtimer() { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory"); return t; }

// Thread 0 stamps slot's start and end; the barrier makes "end" the end of
// the whole (one-warp) block.
extern "C" __global__ void stamp_kernel(u64 *buf, int slot) {
  if (threadIdx.x == 0) buf[2 * slot] = gtimer();
  __syncthreads();
  if (threadIdx.x == 0) buf[2 * slot + 1] = gtimer();
}

static long long now_ns(clockid_t c) { struct timespec ts; clock_gettime(c, &ts); return ts.tv_sec * 1000000000LL + ts.tv_nsec; }

static int cmp_d(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
// Sorts v; q = median, p10, p90.
static void quant(double *v, int n, double *q) {
  qsort(v, n, sizeof *v, cmp_d);
  q[0] = v[n / 2]; q[1] = v[n / 10]; q[2] = v[(n * 9) / 10];
}

// Is cpu in a list like "0-7,16-23"?
static int in_list(const char *s, int cpu) {
  while (*s) {
    char *e; long a = strtol(s, &e, 10), b = a;
    if (e == s) return 0;
    if (*e == '-') { s = e + 1; b = strtol(s, &e, 10); }
    if (cpu >= a && cpu <= b) return 1;
    s = e; while (*s == ',' || isspace((unsigned char)*s)) s++;
  }
  return 0;
}

static int cpu_node(int cpu) {
  char p[128];
  if (cpu < 0) return -1;
  snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu%d", cpu);
  DIR *d = opendir(p);
  if (d) {
    struct dirent *e; int node = -1;
    while ((e = readdir(d)))
      if (!strncmp(e->d_name, "node", 4) && isdigit((unsigned char)e->d_name[4])) { node = atoi(e->d_name + 4); break; }
    closedir(d);
    if (node >= 0) return node;
  }
  for (int n = 0; n < 1024; n++) {
    char l[4096];
    snprintf(p, sizeof p, "/sys/devices/system/node/node%d/cpulist", n);
    FILE *f = fopen(p, "r");
    if (!f) continue;
    int hit = fgets(l, sizeof l, f) && in_list(l, cpu);
    fclose(f);
    if (hit) return n;
  }
  return -1;
}

// The affinity mask as "0-7,16-23".
static void allowed_list(char *out, size_t cap) {
  cpu_set_t set; size_t len = 0;
  out[0] = 0;
  if (sched_getaffinity(0, sizeof set, &set) != 0) { snprintf(out, cap, "?"); return; }
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &set)) continue;
    int e = c; while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set)) e++;
    if (len < cap) len += snprintf(out + len, cap - len, e > c ? "%s%d-%d" : "%s%d", len ? "," : "", c, e);
    c = e;
  }
}

enum { STREAM, GRAPH, BLOCKING, MODES };
static const char *mode_name[MODES] = {"stream", "graph", "blocking"};

static cudaStream_t st;
static cudaEvent_t ev_spin, ev_block;
static cudaGraphExec_t gexec;
static cudaGraphNode_t gnode;
static cudaKernelNodeParams kp;
static u64 *dbuf;
static int kslot;
static void *kargs[2] = {&dbuf, &kslot};

// One launch + wait. r/m: realtime/monotonic ns before the launch (0) and
// after the wait (1); ms: monotonic after the event record returned.
static long one(int mode, int slot, long long *r0, long long *m0, long long *ms, long long *r1, long long *m1) {
  long polls = 0; cudaError_t e;
  *m0 = now_ns(CLOCK_MONOTONIC); *r0 = now_ns(CLOCK_REALTIME);
  if (mode == GRAPH) {
    kslot = slot;
    CK(cudaGraphExecKernelNodeSetParams(gexec, gnode, &kp));
    CK(cudaGraphLaunch(gexec, st));
  } else {
    stamp_kernel<<<1, 32, 0, st>>>(dbuf, slot);
    CK(cudaGetLastError());
  }
  cudaEvent_t ev = mode == BLOCKING ? ev_block : ev_spin;
  CK(cudaEventRecord(ev, st));
  *ms = now_ns(CLOCK_MONOTONIC);
  if (mode == BLOCKING) CK(cudaEventSynchronize(ev));
  else { while ((e = cudaEventQuery(ev)) == cudaErrorNotReady) polls++; CK(e); }
  *r1 = now_ns(CLOCK_REALTIME); *m1 = now_ns(CLOCK_MONOTONIC);
  return polls;
}

static void put(const char *name, const double *q, double shift) {
  printf(" %s %.2f (%.2f..%.2f)", name, q[0] + shift, q[1] + shift, q[2] + shift);
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 2000;
  if (iters < 10) iters = 10;
  int cpu0 = sched_getcpu();
  char allowed[4096]; allowed_list(allowed, sizeof allowed);

  int dev = 0, drv = 0; char bus[64] = "?", sysbus[64] = "?"; cudaDeviceProp prop;
  CK(cudaSetDevice(dev));
  CK(cudaFree(0));
  CK(cudaGetDeviceProperties(&prop, dev));
  CK(cudaDriverGetVersion(&drv));
  CK(cudaDeviceGetPCIBusId(bus, sizeof bus, dev));
  int gpu_node = -1; unsigned pd, pb, pdv, pf;
  if (sscanf(bus, "%x:%x:%x.%x", &pd, &pb, &pdv, &pf) == 4) {
    char p[160]; snprintf(sysbus, sizeof sysbus, "%04x:%02x:%02x.%x", pd, pb, pdv, pf);
    snprintf(p, sizeof p, "/sys/bus/pci/devices/%s/numa_node", sysbus);
    FILE *f = fopen(p, "r");
    if (f) { if (fscanf(f, "%d", &gpu_node) != 1) gpu_node = -1; fclose(f); }
  }

  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CK(cudaEventCreateWithFlags(&ev_spin, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&ev_block, cudaEventBlockingSync | cudaEventDisableTiming));
  CK(cudaMalloc(&dbuf, sizeof(u64) * 2 * iters));
  cudaGraph_t graph;
  CK(cudaGraphCreate(&graph, 0));
  kp.func = (void *)stamp_kernel; kp.gridDim = dim3(1); kp.blockDim = dim3(32); kp.sharedMemBytes = 0;
  kp.kernelParams = kargs; kp.extra = NULL;
  CK(cudaGraphAddKernelNode(&gnode, graph, NULL, 0, &kp));
  CK(cudaGraphInstantiate(&gexec, graph, 0));

  u64 *hbuf = (u64 *)malloc(sizeof(u64) * 2 * iters);
  long long *r0 = (long long *)malloc(sizeof(long long) * 5 * iters), *m0 = r0 + iters, *ms = m0 + iters, *r1 = ms + iters, *m1 = r1 + iters;
  double *v = (double *)malloc(sizeof(double) * (iters > 1000 ? iters : 1000));
  long *polls = (long *)malloc(sizeof(long) * iters);
  int *cpus = (int *)malloc(sizeof(int) * iters);
  if (!hbuf || !r0 || !v || !polls || !cpus) { printf("FAIL out of host memory\n"); return 1; }
  // q[mode][metric][med,p10,p90]; metrics: rt submit start detect kern polls
  double q[MODES][6][3], minstart[MODES], mindetect[MODES]; int migr[MODES];

  for (int m = 0; m < MODES; m++) {
    long long a, b, c, d, e;
    CK(cudaMemset(dbuf, 0, sizeof(u64) * 2 * iters));
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < 100; i++) one(m, i % iters, &a, &b, &c, &d, &e);
    for (int i = 0; i < iters; i++) { polls[i] = one(m, i, &r0[i], &m0[i], &ms[i], &r1[i], &m1[i]); cpus[i] = sched_getcpu(); }
    CK(cudaMemcpy(hbuf, dbuf, sizeof(u64) * 2 * iters, cudaMemcpyDeviceToHost));
    migr[m] = 0;
    for (int i = 1; i < iters; i++) migr[m] += cpus[i] != cpus[i - 1];
    for (int i = 0; i < iters; i++) if (!hbuf[2 * i] || !hbuf[2 * i + 1]) { printf("FAIL mode %s: slot %d not stamped\n", mode_name[m], i); return 1; }
    for (int i = 0; i < iters; i++) v[i] = (m1[i] - m0[i]) / 1e3;
    quant(v, iters, q[m][0]);
    for (int i = 0; i < iters; i++) v[i] = (ms[i] - m0[i]) / 1e3;
    quant(v, iters, q[m][1]);
    // globaltimer minus host realtime: both ns since the epoch, up to the
    // GPU's offset from the host clock (signed).
    for (int i = 0; i < iters; i++) v[i] = ((long long)hbuf[2 * i] - r0[i]) / 1e3;
    quant(v, iters, q[m][2]); minstart[m] = v[0];
    for (int i = 0; i < iters; i++) v[i] = (r1[i] - (long long)hbuf[2 * i + 1]) / 1e3;
    quant(v, iters, q[m][3]); mindetect[m] = v[0];
    for (int i = 0; i < iters; i++) v[i] = ((long long)hbuf[2 * i + 1] - (long long)hbuf[2 * i]) / 1e3;
    quant(v, iters, q[m][4]);
    for (int i = 0; i < iters; i++) v[i] = (double)polls[i];
    quant(v, iters, q[m][5]);
  }

  // One cudaEventQuery on a completed event, 1000 calls timed one by one.
  CK(cudaEventSynchronize(ev_spin));
  for (int i = 0; i < 1000; i++) {
    long long a = now_ns(CLOCK_MONOTONIC);
    CK(cudaEventQuery(ev_spin));
    v[i] = (now_ns(CLOCK_MONOTONIC) - a) / 1e3;
  }
  double qe[3]; quant(v, 1000, qe);
  int cpu1 = sched_getcpu();

  printf("probe pid %d cpu %d->%d cpu_node %d allowed %s gpu %s gpu_node %d device \"%s\" driver %d iters %d\n",
         (int)getpid(), cpu0, cpu1, cpu_node(cpu1), allowed, sysbus, gpu_node, prop.name, drv, iters);
  // start = globaltimer at kernel start - host realtime before the launch;
  // detect = host realtime after the wait - globaltimer at kernel end. With
  // the GPU's clock offset off (unknown), start + detect = rt - kern
  // whatever off is (start + off, detect - off), so the split between them
  // means something only if off is stable; it is bounded by
  // -min(detect) <= off <= min(start) ("offset [LO, HI]"): a narrow, stable
  // bracket across processes makes the raw start/detect comparable between
  // them. sx = start - min(start) of this mode ("start excess"),
  // dx = detect + min(start) (the same sum, the offset taken out as far as
  // this process can). submit = launch + record calls alone (monotonic);
  // polls = cudaEventQuery calls that read not-ready; migr = iterations that
  // ran on another cpu than the one before.
  for (int m = 0; m < MODES; m++) {
    printf("mode %s: n %d", mode_name[m], iters);
    put("rt", q[m][0], 0); put("submit", q[m][1], 0); put("start", q[m][2], 0); put("detect", q[m][3], 0);
    put("kern", q[m][4], 0); put("sx", q[m][2], -minstart[m]); put("dx", q[m][3], minstart[m]);
    printf(" polls %.0f (%.0f..%.0f) migr %d offset [%.2f, %.2f]\n", q[m][5][0], q[m][5][1], q[m][5][2], migr[m], -mindetect[m], minstart[m]);
  }
  printf("evq median %.3f us (p10 %.3f, p90 %.3f) per cudaEventQuery on a completed event\n", qe[0], qe[1], qe[2]);
  printf("summary pid %d cpu %d->%d node %d gpu_node %d", (int)getpid(), cpu0, cpu1, cpu_node(cpu1), gpu_node);
  for (int m = 0; m < MODES; m++)
    printf(" | %s rt %.2f start %.2f detect %.2f", mode_name[m], q[m][0][0], q[m][2][0], q[m][3][0]);
  printf(" | evq %.3f\n", qe[0]);

  CK(cudaGraphExecDestroy(gexec)); CK(cudaGraphDestroy(graph));
  CK(cudaEventDestroy(ev_spin)); CK(cudaEventDestroy(ev_block)); CK(cudaStreamDestroy(st));
  CK(cudaFree(dbuf));
  free(hbuf); free(r0); free(v); free(polls); free(cpus);
  return 0;
}
