/* multi_support.h - helpers of the several-devices conformance tests
 * (multi_device.c, multi_device_gating.c, multi_backend.c,
 * deferred_gating.c). */
#ifndef MOX_CONF_MULTI_SUPPORT_H
#define MOX_CONF_MULTI_SUPPORT_H

#include "support.h"

/* Busy work of conf's slow_copy: long enough that the next submissions
 * find it unfinished on every backend (never asserted: only the outcome
 * is, and where it depends on timing the test checks which case it got). */
#define MD_SLOW_SPINS 20000u

/* Exits 77 (skip) unless the run's backend has two devices. */
void md_require_two_devices(void);
/* Opens device `ordinal` of the run's backend (capacity 0 = default), with
 * the conformance module prepared. */
mox_device *md_open(uint32_t ordinal, uint32_t capacity);
/* Devices 0 and 1 of the run's backend (md_open, default capacity): the
 * group set-up of the two-device tests; md_release_pair ends it. */
void md_open_pair(mox_device **d0, mox_device **d1);
void md_release_pair(mox_device *d0, mox_device *d1);
/* Polls once: the op is submitted (its modules are prepared). Returns it. */
mox_op *md_submit(mox_op *op);
/* Elements [first, first+count) must be (i - first) * step + base. */
void md_expect_ramp(mox_buffer *b, size_t first, size_t count, float base, float step);
/* A ramp 0, 1, 2... of n elements on `dev` with `bad` (negative: conf's
 * checked kernels fail on it) at n / 2. */
mox_buffer *md_poisoned(mox_device *dev, uint32_t n, float bad);
/* The op ends with `code`, its error caused by `cause`, its message
 * holding `text`. */
void md_expect_gated_by(mox_op *op, mox_status code, const mox_error *cause, const char *text);

#endif
