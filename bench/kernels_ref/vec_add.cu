// vec_add.cu - hand-written CUDA reference of examples/vec-add's kernel:
// one thread per element with a bounds guard. Built by nvcc with moxc's
// numeric flags; the runner times it against the moxc-generated entry.
extern "C" __global__ void ref_vec_add(const float *a, const float *b, float *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a[i] + b[i];
}
