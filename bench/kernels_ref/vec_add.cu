// vec_add.cu - hand-written CUDA reference of examples/vec-add's kernel:
// one thread per element with a bounds guard. Built by nvcc with moxc's
// numeric flags; the runner times it against the moxc-generated entry.
extern "C" __global__ void ref_vec_add(const float *a, const float *b, float *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a[i] + b[i];
}

// Not a workload: one thread that spins for `cycles` SM clocks. The runner
// launches it just before each timed region, so the launches being timed
// are already queued when the start event fires and the events measure
// the kernels, not the host's launch latency.
extern "C" __global__ void ref_spin(unsigned long long cycles)
{
    long long start = clock64();
    while ((unsigned long long)(clock64() - start) < cycles) {
    }
}
