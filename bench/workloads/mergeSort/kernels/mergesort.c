/* mergesort.c - port of NVIDIA cuda-samples mergeSort's kernels
 * (Samples/0_Introduction/mergeSort/mergeSort.cu, unchanged in
 * ../original/; after Satish, Harris and Garland, "Designing efficient
 * sorting algorithms for manycore GPUs") to the mox dialect: a shared-memory
 * merge sort of 1024-key tiles, then per doubling of the sorted stride the
 * sample ranks, the merged ranks (limits) of both halves, and the merge of
 * the elementary intervals. Key-value pairs, stable.
 *
 * The original's kernels are templates over the sort direction; the port
 * has the ascending instantiation (<1U>, what the sample runs), with the
 * direction a constant argument of the search helpers (__clz and umin are
 * mox_clz_u32 and mox_min_u32). The thread-block-wide scalars of
 * mergeElementaryIntervalsKernel are one-element shared arrays. */
#include <mox/kernel.h>

#include "mergesort_port.h"

#define W (sizeof(uint32_t) * 8)

static uint32_t iDivUp(uint32_t a, uint32_t b)
{
    return ((a % b) == 0) ? (a / b) : (a / b + 1);
}

static uint32_t getSampleCount(uint32_t dividend)
{
    return iDivUp(dividend, SAMPLE_STRIDE);
}

static uint32_t nextPowerOfTwo(uint32_t x)
{
    return 1U << (W - mox_clz_u32(x - 1));
}

static uint32_t binarySearchInclusive(uint32_t sortDir, uint32_t val, const uint32_t *data, uint32_t L,
                                      uint32_t stride)
{
    if (L == 0)
        return 0;

    uint32_t pos = 0;

    for (; stride > 0; stride >>= 1) {
        uint32_t newPos = mox_min_u32(pos + stride, L);

        if ((sortDir && (data[newPos - 1] <= val)) || (!sortDir && (data[newPos - 1] >= val)))
            pos = newPos;
    }

    return pos;
}

static uint32_t binarySearchExclusive(uint32_t sortDir, uint32_t val, const uint32_t *data, uint32_t L,
                                      uint32_t stride)
{
    if (L == 0)
        return 0;

    uint32_t pos = 0;

    for (; stride > 0; stride >>= 1) {
        uint32_t newPos = mox_min_u32(pos + stride, L);

        if ((sortDir && (data[newPos - 1] < val)) || (!sortDir && (data[newPos - 1] > val)))
            pos = newPos;
    }

    return pos;
}

/* Bottom-level merge sort (binary search-based). */
MOX_KERNEL MOX_BLOCK(SHARED_SIZE_LIMIT / 2, 1, 1)
void mergeSortSharedKernel1(uint32_t *d_DstKey, uint32_t *d_DstVal, const uint32_t *d_SrcKey,
                            const uint32_t *d_SrcVal, uint32_t arrayLength)
{
    MOX_SHARED(uint32_t, s_key, SHARED_SIZE_LIMIT);
    MOX_SHARED(uint32_t, s_val, SHARED_SIZE_LIMIT);
    const uint32_t tid = mox_thread_idx().x;

    d_SrcKey += mox_block_idx().x * SHARED_SIZE_LIMIT + tid;
    d_SrcVal += mox_block_idx().x * SHARED_SIZE_LIMIT + tid;
    d_DstKey += mox_block_idx().x * SHARED_SIZE_LIMIT + tid;
    d_DstVal += mox_block_idx().x * SHARED_SIZE_LIMIT + tid;
    s_key[tid + 0] = d_SrcKey[0];
    s_val[tid + 0] = d_SrcVal[0];
    s_key[tid + (SHARED_SIZE_LIMIT / 2)] = d_SrcKey[(SHARED_SIZE_LIMIT / 2)];
    s_val[tid + (SHARED_SIZE_LIMIT / 2)] = d_SrcVal[(SHARED_SIZE_LIMIT / 2)];

    for (uint32_t stride = 1; stride < arrayLength; stride <<= 1) {
        uint32_t lPos = tid & (stride - 1);
        uint32_t *baseKey = s_key + 2 * (tid - lPos);
        uint32_t *baseVal = s_val + 2 * (tid - lPos);

        mox_barrier();
        uint32_t keyA = baseKey[lPos + 0];
        uint32_t valA = baseVal[lPos + 0];
        uint32_t keyB = baseKey[lPos + stride];
        uint32_t valB = baseVal[lPos + stride];
        uint32_t posA = binarySearchExclusive(1U, keyA, baseKey + stride, stride, stride) + lPos;
        uint32_t posB = binarySearchInclusive(1U, keyB, baseKey + 0, stride, stride) + lPos;

        mox_barrier();
        baseKey[posA] = keyA;
        baseVal[posA] = valA;
        baseKey[posB] = keyB;
        baseVal[posB] = valB;
    }

    mox_barrier();
    d_DstKey[0] = s_key[tid + 0];
    d_DstVal[0] = s_val[tid + 0];
    d_DstKey[(SHARED_SIZE_LIMIT / 2)] = s_key[tid + (SHARED_SIZE_LIMIT / 2)];
    d_DstVal[(SHARED_SIZE_LIMIT / 2)] = s_val[tid + (SHARED_SIZE_LIMIT / 2)];
}

/* Merge step 1: generate sample ranks. */
MOX_KERNEL MOX_BLOCK(256, 1, 1)
void generateSampleRanksKernel1(uint32_t *d_RanksA, uint32_t *d_RanksB, const uint32_t *d_SrcKey,
                                uint32_t stride, uint32_t N, uint32_t threadCount)
{
    uint32_t pos = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;

    if (pos >= threadCount)
        return;

    const uint32_t i = pos & ((stride / SAMPLE_STRIDE) - 1);
    const uint32_t segmentBase = (pos - i) * (2 * SAMPLE_STRIDE);
    d_SrcKey += segmentBase;
    d_RanksA += segmentBase / SAMPLE_STRIDE;
    d_RanksB += segmentBase / SAMPLE_STRIDE;

    const uint32_t segmentElementsA = stride;
    const uint32_t segmentElementsB = mox_min_u32(stride, N - segmentBase - stride);
    const uint32_t segmentSamplesA = getSampleCount(segmentElementsA);
    const uint32_t segmentSamplesB = getSampleCount(segmentElementsB);

    if (i < segmentSamplesA) {
        d_RanksA[i] = i * SAMPLE_STRIDE;
        d_RanksB[i] = binarySearchExclusive(1U, d_SrcKey[i * SAMPLE_STRIDE], d_SrcKey + stride,
                                            segmentElementsB, nextPowerOfTwo(segmentElementsB));
    }

    if (i < segmentSamplesB) {
        d_RanksB[(stride / SAMPLE_STRIDE) + i] = i * SAMPLE_STRIDE;
        d_RanksA[(stride / SAMPLE_STRIDE) + i] =
            binarySearchInclusive(1U, d_SrcKey[stride + i * SAMPLE_STRIDE], d_SrcKey + 0, segmentElementsA,
                                  nextPowerOfTwo(segmentElementsA));
    }
}

/* Merge step 2: generate sample ranks and indices. */
MOX_KERNEL MOX_BLOCK(256, 1, 1)
void mergeRanksAndIndicesKernel(uint32_t *d_Limits, const uint32_t *d_Ranks, uint32_t stride, uint32_t N,
                                uint32_t threadCount)
{
    uint32_t pos = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;

    if (pos >= threadCount)
        return;

    const uint32_t i = pos & ((stride / SAMPLE_STRIDE) - 1);
    const uint32_t segmentBase = (pos - i) * (2 * SAMPLE_STRIDE);
    d_Ranks += (pos - i) * 2;
    d_Limits += (pos - i) * 2;

    const uint32_t segmentElementsA = stride;
    const uint32_t segmentElementsB = mox_min_u32(stride, N - segmentBase - stride);
    const uint32_t segmentSamplesA = getSampleCount(segmentElementsA);
    const uint32_t segmentSamplesB = getSampleCount(segmentElementsB);

    if (i < segmentSamplesA) {
        uint32_t dstPos = binarySearchExclusive(1U, d_Ranks[i], d_Ranks + segmentSamplesA, segmentSamplesB,
                                                nextPowerOfTwo(segmentSamplesB)) +
                          i;
        d_Limits[dstPos] = d_Ranks[i];
    }

    if (i < segmentSamplesB) {
        uint32_t dstPos = binarySearchInclusive(1U, d_Ranks[segmentSamplesA + i], d_Ranks, segmentSamplesA,
                                                nextPowerOfTwo(segmentSamplesA)) +
                          i;
        d_Limits[dstPos] = d_Ranks[segmentSamplesA + i];
    }
}

/* Merge step 3: merge elementary intervals (in shared memory). */
static void merge(uint32_t *dstKey, uint32_t *dstVal, const uint32_t *srcAKey, const uint32_t *srcAVal,
                  const uint32_t *srcBKey, const uint32_t *srcBVal, uint32_t lenA, uint32_t nPowTwoLenA,
                  uint32_t lenB, uint32_t nPowTwoLenB)
{
    uint32_t keyA = 0, valA = 0, keyB = 0, valB = 0, dstPosA = 0, dstPosB = 0;
    const uint32_t tid = mox_thread_idx().x;

    if (tid < lenA) {
        keyA = srcAKey[tid];
        valA = srcAVal[tid];
        dstPosA = binarySearchExclusive(1U, keyA, srcBKey, lenB, nPowTwoLenB) + tid;
    }

    if (tid < lenB) {
        keyB = srcBKey[tid];
        valB = srcBVal[tid];
        dstPosB = binarySearchInclusive(1U, keyB, srcAKey, lenA, nPowTwoLenA) + tid;
    }

    mox_barrier();

    if (tid < lenA) {
        dstKey[dstPosA] = keyA;
        dstVal[dstPosA] = valA;
    }

    if (tid < lenB) {
        dstKey[dstPosB] = keyB;
        dstVal[dstPosB] = valB;
    }
}

MOX_KERNEL MOX_BLOCK(SAMPLE_STRIDE, 1, 1)
void mergeElementaryIntervalsKernel1(uint32_t *d_DstKey, uint32_t *d_DstVal, const uint32_t *d_SrcKey,
                                     const uint32_t *d_SrcVal, const uint32_t *d_LimitsA,
                                     const uint32_t *d_LimitsB, uint32_t stride, uint32_t N)
{
    MOX_SHARED(uint32_t, s_key, 2 * SAMPLE_STRIDE);
    MOX_SHARED(uint32_t, s_val, 2 * SAMPLE_STRIDE);
    const uint32_t tid = mox_thread_idx().x, bid = mox_block_idx().x;

    const uint32_t intervalI = bid & ((2 * stride) / SAMPLE_STRIDE - 1);
    const uint32_t segmentBase = (bid - intervalI) * SAMPLE_STRIDE;
    d_SrcKey += segmentBase;
    d_SrcVal += segmentBase;
    d_DstKey += segmentBase;
    d_DstVal += segmentBase;

    /* Set up threadblock-wide parameters */
    MOX_SHARED(uint32_t, startSrcA, 1);
    MOX_SHARED(uint32_t, startSrcB, 1);
    MOX_SHARED(uint32_t, lenSrcA, 1);
    MOX_SHARED(uint32_t, lenSrcB, 1);
    MOX_SHARED(uint32_t, startDstA, 1);
    MOX_SHARED(uint32_t, startDstB, 1);

    if (tid == 0) {
        uint32_t segmentElementsA = stride;
        uint32_t segmentElementsB = mox_min_u32(stride, N - segmentBase - stride);
        uint32_t segmentSamplesA = getSampleCount(segmentElementsA);
        uint32_t segmentSamplesB = getSampleCount(segmentElementsB);
        uint32_t segmentSamples = segmentSamplesA + segmentSamplesB;
        startSrcA[0] = d_LimitsA[bid];
        startSrcB[0] = d_LimitsB[bid];
        uint32_t endSrcA = (intervalI + 1 < segmentSamples) ? d_LimitsA[bid + 1] : segmentElementsA;
        uint32_t endSrcB = (intervalI + 1 < segmentSamples) ? d_LimitsB[bid + 1] : segmentElementsB;
        lenSrcA[0] = endSrcA - startSrcA[0];
        lenSrcB[0] = endSrcB - startSrcB[0];
        startDstA[0] = startSrcA[0] + startSrcB[0];
        startDstB[0] = startDstA[0] + lenSrcA[0];
    }

    /* Load main input data */
    mox_barrier();

    if (tid < lenSrcA[0]) {
        s_key[tid + 0] = d_SrcKey[0 + startSrcA[0] + tid];
        s_val[tid + 0] = d_SrcVal[0 + startSrcA[0] + tid];
    }

    if (tid < lenSrcB[0]) {
        s_key[tid + SAMPLE_STRIDE] = d_SrcKey[stride + startSrcB[0] + tid];
        s_val[tid + SAMPLE_STRIDE] = d_SrcVal[stride + startSrcB[0] + tid];
    }

    /* Merge data in shared memory */
    mox_barrier();
    merge(s_key, s_val, s_key + 0, s_val + 0, s_key + SAMPLE_STRIDE, s_val + SAMPLE_STRIDE, lenSrcA[0],
          SAMPLE_STRIDE, lenSrcB[0], SAMPLE_STRIDE);

    /* Store merged data */
    mox_barrier();

    if (tid < lenSrcA[0]) {
        d_DstKey[startDstA[0] + tid] = s_key[tid];
        d_DstVal[startDstA[0] + tid] = s_val[tid];
    }

    if (tid < lenSrcB[0]) {
        d_DstKey[startDstB[0] + tid] = s_key[lenSrcA[0] + tid];
        d_DstVal[startDstB[0] + tid] = s_val[lenSrcA[0] + tid];
    }
}
