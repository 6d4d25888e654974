/* testing.c - the hidden test hooks of testing.h. */
#include "testing.h"

#include "device.h"
#include "error.h"
#include "op.h"

mox_status mox__testing_hold(mox_device *device, bool hold)
{
    if (!device)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox__testing_hold: device is NULL");
    if (!device->backend->vt->set_hold)
        return mox__raise(MOX_ERR_STATE, "this backend cannot hold submitted work");
    device->backend->vt->set_hold(device->backend, hold);
    return MOX_OK;
}

uint32_t mox__testing_in_flight(mox_device *device)
{
    if (!device)
        return 0;
    mox__lock(&device->lock);
    uint32_t n = device->in_flight;
    mox__unlock(&device->lock);
    return n;
}

uint32_t mox__testing_then_depth(const mox_op *op)
{
    uint32_t depth = 0;
    for (; op && op->kind == MOX__OP_THEN; op = op->u.then.current)
        depth++;
    return depth;
}

_Atomic(const mox__testing_hook *) mox__complete_hook;

void mox__testing_on_complete(const mox__testing_hook *hook)
{
    atomic_store_explicit(&mox__complete_hook, hook, memory_order_release);
}
