/* mox/device.h - devices: one scheduling context each.
 *
 * mox_device_open picks the backend: MOX_BACKEND=cuda|cpu forces one,
 * unset (or empty) picks CUDA when libcuda.so.1 loads and a GPU exists,
 * else the CPU. Two opens give two separate contexts whose objects do not
 * mix (MOX_ERR_DEVICE_MISMATCH); mox_device_retain shares one context.
 * Devices may be used from any thread.
 *
 * Several devices (docs/multi-device.md): a backend has
 * mox_device_count() devices (CUDA: the GPUs; CPU: MOX_CPU_DEVICES virtual
 * devices, default 1), opened by ordinal or UUID through
 * mox_device_options. Buffers stay on their device; mox_buffer_copy moves
 * data between devices, ordered like any other work.
 */
#ifndef MOX_DEVICE_H
#define MOX_DEVICE_H

#include <stdbool.h>

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

/* Options of mox_device_open_with. Zero means "default" for every field;
 * initialise them with designated initializers ({.backend = ..., ...}) in
 * C, and in C++ value-initialise, then set fields (mox_device_options
 * o{}; o.backend = ...;): fields may be added at the end. */
typedef struct mox_device_options {
    mox_backend backend;      /* MOX_BACKEND_AUTO honours the MOX_BACKEND variable */
    uint32_t command_capacity; /* max in-flight batches (A3); 0 = default (64) */
    uint32_t cpu_threads;      /* CPU backend worker count; 0 = number of cores */
    /* Which device of the backend. `uuid` (non-NULL) picks the device whose
     * mox_device_uuid it is; else `use_ordinal` picks device `ordinal`
     * (0 .. mox_device_count - 1); else the default device: CUDA's
     * MOX_CUDA_DEVICE (0 when unset), the CPU's device 0. With
     * MOX_BACKEND_AUTO, a device CUDA does not have is looked for on the CPU
     * (the same ordinal or UUID; with neither, CPU device 0: a
     * MOX_CUDA_DEVICE naming no GPU then opens it silently). */
    bool use_ordinal;
    uint32_t ordinal;
    const char *uuid;
} mox_device_options;

/* Opens a device with default options (backend from MOX_BACKEND).
 * Codes: MOX_ERR_DEVICE_UNAVAILABLE (forced backend missing, no device of
 * that ordinal or UUID), MOX_ERR_CONFIG (unknown MOX_BACKEND value, bad
 * MOX_CPU_DEVICES or MOX_CUDA_DEVICE), MOX_ERR_INVALID_ARGUMENT (a
 * malformed UUID), MOX_ERR_OUT_OF_MEMORY, MOX_ERR_BACKEND. */
MOX_API mox_status mox_device_open(mox_device **out);
/* Same, with options; options may be NULL. */
MOX_API mox_status mox_device_open_with(const mox_device_options *options, mox_device **out);

/* The number of devices of `backend` in *count: CUDA's GPUs (0 without a
 * driver or GPU), the CPU's virtual devices (MOX_CPU_DEVICES, 1 to 64,
 * default 1). MOX_BACKEND_AUTO counts the backend mox_device_open would
 * pick (MOX_BACKEND, else CUDA when it has a device, else the CPU).
 * Codes: MOX_ERR_INVALID_ARGUMENT (NULL count, unknown backend),
 * MOX_ERR_CONFIG (a bad MOX_BACKEND or MOX_CPU_DEVICES),
 * MOX_ERR_BACKEND (the driver failed to answer). */
MOX_API mox_status mox_device_count(mox_backend backend, uint32_t *count);
/* A clone sharing the same context. Returns device. */
MOX_API mox_device *mox_device_retain(mox_device *device);
/* Drops a reference. Never blocks on GPU work: submitted work finishes with
 * its resources retained. release(NULL) is a no-op; releasing a reference
 * twice is undefined (a debug build aborts, docs/errors.md). */
MOX_API void mox_device_release(mox_device *device);

/* The getters below read a device and set no error: on NULL they return
 * MOX_BACKEND_AUTO, "", a zero mox_dim3 or 0. */
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
 * (mox_error_last says why). Closed when the device context's last
 * reference goes (the device and its clones, its buffers, ops, results and
 * running work), possibly on a mox thread after mox_device_release: stop
 * watching it before dropping your last reference (docs/async.md). */
MOX_API int mox_device_event_fd(mox_device *device);

/* Number of submissions handed to the backend so far: each batch, each op
 * that submits alone, each blocking mox_buffer_read / mox_buffer_write (a
 * counter for tests and tooling: constructing an op must not change it,
 * rule A1). */
MOX_API uint64_t mox_device_submission_count(const mox_device *device);

/* Status of the device: MOX_OK, or MOX_ERR_DEVICE_LOST after a sticky fault. */
MOX_API mox_status mox_device_health(const mox_device *device);

/* The device's ordinal within its backend (0 for NULL). */
MOX_API uint32_t mox_device_ordinal(const mox_device *device);
/* Writes the device's UUID, 36 characters and a NUL ("8-4-4-4-12" lower-
 * case hex: CUDA's cuDeviceGetUuid, the GPU's "GPU-..." id in nvidia-smi
 * without its prefix; CPU devices have fixed ones, docs/multi-device.md).
 * Two contexts of one physical device have the same UUID.
 * Codes: MOX_ERR_INVALID_ARGUMENT (NULL argument). */
MOX_API mox_status mox_device_uuid(const mox_device *device, char out[37]);

/* How device `a` reaches the memory of device `b` (mox_device_peer). */
typedef enum mox_peer_link {
    MOX_PEER_NONE = 0,   /* no direct path: copies between them go through host memory */
    MOX_PEER_SAME = 1,   /* one physical device (two contexts of one GPU or CPU device) */
    MOX_PEER_HOST = 2,   /* two CPU devices: one host memory */
    MOX_PEER_PCIE = 3,   /* two GPUs with peer access over PCIe */
    MOX_PEER_NVLINK = 4  /* two GPUs with peer access over NVLink */
} mox_peer_link;

/* How `a` reaches `b`'s memory: devices of different backends give
 * MOX_PEER_NONE. "MOX_PEER_NONE", "MOX_PEER_NVLINK"... from
 * mox_peer_link_name. Codes: MOX_ERR_INVALID_ARGUMENT (NULL argument),
 * MOX_ERR_BACKEND (the driver failed to answer). */
MOX_API mox_status mox_device_peer(const mox_device *a, const mox_device *b, mox_peer_link *out);
MOX_API const char *mox_peer_link_name(mox_peer_link link);

#ifdef __cplusplus
}
#endif
#endif
