// scan.cu - hand-written CUDA reference of examples/cooperation's
// hierarchical exclusive scan (u32, wrapping): block_scan scans 256 values
// per block with warp shuffles and writes the block's total; add_offsets
// adds each block's offset from the level above.
__device__ static unsigned warp_exclusive_sum(unsigned v, unsigned lane)
{
    unsigned x = v;
    for (unsigned d = 1u; d < 32u; d *= 2u) {
        unsigned y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d)
            x += y;
    }
    return x - v;
}

__device__ static unsigned warp_sum(unsigned v)
{
    for (unsigned d = 16u; d > 0u; d /= 2u)
        v += __shfl_xor_sync(0xffffffffu, v, d);
    return v;
}

extern "C" __global__ void __launch_bounds__(256) ref_block_scan(const unsigned *input, unsigned *prefix, unsigned *totals, unsigned n)
{
    __shared__ unsigned warp_totals[8];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * 256u + t;
    unsigned lane = t % 32u, warp = t / 32u;
    unsigned v = i < n ? input[i] : 0u;
    unsigned within_warp = warp_exclusive_sum(v, lane);
    unsigned warp_total = warp_sum(v);
    if (lane == 0u)
        warp_totals[warp] = warp_total;
    __syncthreads();
    unsigned offset = 0u;
    for (unsigned w = 0; w < warp; w++)
        offset += warp_totals[w];
    unsigned exclusive = offset + within_warp;
    if (i < n)
        prefix[i] = exclusive;
    if (t == 255u)
        totals[blockIdx.x] = exclusive + v;
}

extern "C" __global__ void __launch_bounds__(256) ref_add_offsets(unsigned *data, const unsigned *offsets, unsigned n)
{
    unsigned i = blockIdx.x * 256u + threadIdx.x;
    if (i < n)
        data[i] += offsets[blockIdx.x];
}
