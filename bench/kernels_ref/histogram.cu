// histogram.cu - hand-written CUDA reference of examples/cooperation's
// 16-bin histogram: per-block shared-memory atomic bins, flushed into the
// device-wide bins (non-zero bins only).
extern "C" __global__ void __launch_bounds__(256) ref_histogram(const unsigned *values, unsigned *bins, unsigned n)
{
    __shared__ unsigned local[16];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    if (t < 16u)
        local[t] = 0u;
    __syncthreads();
    if (i < n)
        atomicAdd(&local[values[i] & 15u], 1u);
    __syncthreads();
    if (t < 16u) {
        unsigned count = local[t];
        if (count != 0u)
            atomicAdd(&bins[t], count);
    }
}
