// matmul.cu - hand-written CUDA references of examples/matmul's tiled
// products (f32 and f16 inputs): 16x16 tiles of a and b staged in shared
// memory per k-step, zero outside the matrices, accumulated in f32 in k
// order, so the results have the same bits as the generated kernels'.
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(256) ref_matmul(const float *a, const float *b, float *c, unsigned rows, unsigned cols, unsigned inner)
{
    __shared__ float tile_a[256];
    __shared__ float tile_b[256];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned row = blockIdx.y * 16u + ty;
    unsigned col = blockIdx.x * 16u + tx;
    unsigned steps = (inner + 15u) / 16u;
    float acc = 0.0f;
    for (unsigned s = 0; s < steps; s++) {
        unsigned ka = s * 16u + tx, kb = s * 16u + ty;
        tile_a[ty * 16u + tx] = (row < rows && ka < inner) ? a[row * inner + ka] : 0.0f;
        tile_b[ty * 16u + tx] = (kb < inner && col < cols) ? b[kb * cols + col] : 0.0f;
        __syncthreads();
        for (unsigned k = 0; k < 16u; k++)
            acc = acc + tile_a[ty * 16u + k] * tile_b[k * 16u + tx];
        __syncthreads();
    }
    if (row < rows && col < cols)
        c[row * cols + col] = acc;
}

extern "C" __global__ void __launch_bounds__(256) ref_matmul_f16(const __half *a, const __half *b, float *c, unsigned rows, unsigned cols, unsigned inner)
{
    __shared__ float tile_a[256];
    __shared__ float tile_b[256];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned row = blockIdx.y * 16u + ty;
    unsigned col = blockIdx.x * 16u + tx;
    unsigned steps = (inner + 15u) / 16u;
    float acc = 0.0f;
    for (unsigned s = 0; s < steps; s++) {
        unsigned ka = s * 16u + tx, kb = s * 16u + ty;
        tile_a[ty * 16u + tx] = (row < rows && ka < inner) ? __half2float(a[row * inner + ka]) : 0.0f;
        tile_b[ty * 16u + tx] = (kb < inner && col < cols) ? __half2float(b[kb * cols + col]) : 0.0f;
        __syncthreads();
        for (unsigned k = 0; k < 16u; k++)
            acc = acc + tile_a[ty * 16u + k] * tile_b[k * 16u + tx];
        __syncthreads();
    }
    if (row < rows && col < cols)
        c[row * cols + col] = acc;
}
