/* stress_faults.c - the fault thread of stress_faults.h. */
#include "stress_faults.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "core/testing.h"
#include "stress_jobs.h"

static _Atomic bool stopping;
static pthread_t thread;
static uint64_t rng;
static uint64_t injected;

static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static void *fault_main(void *p)
{
    (void)p;
    while (!atomic_load(&stopping)) {
        long k = (long)(next_rand() % 4000);
        switch (next_rand() % 3) {
        case 0:
            mox__testing_fault_arm(MOX__FAULT_ONCE, k, 1);
            break;
        case 1:
            mox__testing_fault_arm(MOX__FAULT_FROM, k, 0);
            break;
        default:
            mox__testing_fault_arm(MOX__FAULT_BURST, k, 1 + (long)(next_rand() % 64));
            break;
        }
        usleep(500 + next_rand() % 3000); /* FROM: memory comes back when disarmed */
        mox__testing_fault_disarm();
        injected += (uint64_t)mox__testing_fault_injected();
        usleep(next_rand() % 2000);
    }
    return NULL;
}

void stress_faults_start(uint64_t seed)
{
    rng = seed * 0x2545F4914F6CDD1Dull + 1;
    atomic_store(&stress_faults_active, true);
    if (pthread_create(&thread, NULL, fault_main, NULL) != 0)
        stress_die("cannot start the fault thread");
}

uint64_t stress_faults_stop(void)
{
    atomic_store(&stopping, true);
    pthread_join(thread, NULL);
    mox__testing_fault_disarm();
    atomic_store(&stress_faults_active, false);
    return injected;
}
