/* stress_faults.h - allocation-failure injection during the progress stress
 * (progress_stress_faults, linked with libmox_testing): a thread arms the
 * hook of src/core/testing.h in all three modes (one failure, every
 * allocation from k on for a few milliseconds, a burst then recovery) while
 * the jobs run, so failures land on every thread, in construction,
 * preparation, submission, execution and completion. */
#ifndef MOX_STRESS_FAULTS_H
#define MOX_STRESS_FAULTS_H

#include <stdbool.h>
#include <stdint.h>

#ifndef STRESS_FAULTS
#define STRESS_FAULTS 0
#endif

/* While true, a job may end out of memory (checked: code and message);
 * defined in stress_jobs.c. */
extern _Atomic bool stress_faults_active;

void stress_faults_start(uint64_t seed);
/* Stops and disarms; returns the number of failed allocations injected. */
uint64_t stress_faults_stop(void);

#endif
