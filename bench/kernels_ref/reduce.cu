// reduce.cu - hand-written CUDA reference of examples/reduction's kernel:
// a 256-thread block stages its chunk in shared memory (zero past n) and
// halves it with a barrier per step; thread 0 writes the block's sum. The
// same tree order, so the sums have the same bits.
extern "C" __global__ void __launch_bounds__(256) ref_reduce(const float *input, float *output, unsigned n)
{
    __shared__ float tile[256];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * 256u + t;
    tile[t] = i < n ? input[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = 128u; stride > 0u; stride /= 2u) {
        if (t < stride)
            tile[t] = tile[t] + tile[t + stride];
        __syncthreads();
    }
    if (t == 0u)
        output[blockIdx.x] = tile[0];
}
