/* mox/device.h - devices: one scheduling context each.
 *
 * mox_device_open picks the backend: MOX_BACKEND=cuda|cpu forces one,
 * unset (or empty) picks CUDA when libcuda.so.1 loads and a GPU exists,
 * else the CPU. Two opens give two separate contexts whose objects do not
 * mix (MOX_ERR_DEVICE_MISMATCH); mox_device_retain shares one context.
 * Devices may be used from any thread.
 */
#ifndef MOX_DEVICE_H
#define MOX_DEVICE_H

#include <mox/status.h>
#include <mox/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mox_device mox_device;

typedef enum mox_backend {
    MOX_BACKEND_AUTO = 0, /* MOX_BACKEND from the environment, else CUDA if present, else CPU */
    MOX_BACKEND_CPU = 1,
    MOX_BACKEND_CUDA = 2
} mox_backend;

typedef struct mox_device_options {
    mox_backend backend;      /* MOX_BACKEND_AUTO honours the MOX_BACKEND variable */
    uint32_t command_capacity; /* max in-flight batches (A3); 0 = default (64) */
    uint32_t cpu_threads;      /* CPU backend worker count; 0 = number of cores */
} mox_device_options;

/* Opens a device with default options (backend from MOX_BACKEND).
 * Codes: MOX_ERR_DEVICE_UNAVAILABLE (forced backend missing),
 * MOX_ERR_CONFIG (unknown MOX_BACKEND value), MOX_ERR_OUT_OF_MEMORY, MOX_ERR_BACKEND. */
MOX_API mox_status mox_device_open(mox_device **out);
/* Same, with options; options may be NULL. */
MOX_API mox_status mox_device_open_with(const mox_device_options *options, mox_device **out);
/* A clone sharing the same context. Returns device. */
MOX_API mox_device *mox_device_retain(mox_device *device);
/* Drops a reference. Never blocks on GPU work: submitted work finishes with
 * its resources retained. release(NULL) is a no-op. */
MOX_API void mox_device_release(mox_device *device);

MOX_API mox_backend mox_device_backend(const mox_device *device);
/* Human-readable name, e.g. "NVIDIA H200" or "CPU (16 threads)". Borrowed. */
MOX_API const char *mox_device_name(const mox_device *device);
/* Per-axis maximum block size and maximum threads per block. */
MOX_API mox_dim3 mox_device_max_block(const mox_device *device);
MOX_API uint32_t mox_device_max_threads_per_block(const mox_device *device);
/* Largest single buffer in bytes. */
MOX_API uint64_t mox_device_max_buffer_bytes(const mox_device *device);
/* Most bytes of dynamic shared memory (mox_launch_config.shared_bytes) a
 * launch may ask for per block: CUDA, the device's opt-in limit per block
 * (a kernel's own MOX_SHARED arrays count against it too); CPU, 1 MiB. */
MOX_API uint32_t mox_device_max_shared_bytes(const mox_device *device);
/* Warp width used by warp operations (32 on both backends). */
MOX_API uint32_t mox_device_warp_size(const mox_device *device);

/* A file descriptor that becomes readable whenever an operation of this
 * device may have progressed (an eventfd). Event loops watch it, read it to
 * clear it, then poll their ops. Owned by the device; do not close.
 * Created on the first call (readable at once); -1 if it cannot be created
 * (mox_error_last says why). */
MOX_API int mox_device_event_fd(mox_device *device);

/* Number of batches submitted to the backend so far (a counter for tests
 * and tooling: constructing an op must not change it, rule A1). */
MOX_API uint64_t mox_device_submission_count(const mox_device *device);

/* Status of the device: MOX_OK, or MOX_ERR_DEVICE_LOST after a sticky fault. */
MOX_API mox_status mox_device_health(const mox_device *device);

#ifdef __cplusplus
}
#endif
#endif
