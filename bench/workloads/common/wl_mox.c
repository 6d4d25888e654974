/* wl_mox.c - workload instances through the public mox API (wl_mox.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl_mox.h"

static void mox_fail_text(char *err, size_t err_len, const char *what, mox_status st, const mox_op *op)
{
    const mox_result *res = op ? mox_op_result(op) : NULL;
    const mox_error *e = res ? mox_result_error(res) : NULL;
    snprintf(err, err_len, "%s: %s: %s", what, mox_status_name(st),
             e ? mox_error_message(e) : mox_error_last_message());
}

static bool port_uses(const wl_instance *in, uint32_t slot)
{
    for (uint32_t o = 0; o < in->port.output_count; o++)
        if (in->port.outputs[o] == slot)
            return true;
    for (size_t l = 0; l < in->port.count; l++)
        for (uint32_t a = 0; a < in->port.launches[l].arg_count; a++) {
            const wl_arg *arg = &in->port.launches[l].args[a];
            if (arg->kind == WL_ARG_BUFFER && arg->slot == slot)
                return true;
        }
    return false;
}

bool wl_mox_open(wl_mox *m, mox_device *dev, const wl_instance *in, char *err, size_t err_len)
{
    memset(m, 0, sizeof *m);
    m->dev = dev;
    m->in = in;
    for (uint32_t s = 0; s < in->slot_count; s++) {
        if (in->slots[s].symbol || !port_uses(in, s))
            continue;
        mox_status st = mox_buffer_create(dev, in->slots[s].type, in->slots[s].length, &m->buffers[s]);
        if (st != MOX_OK) {
            char what[128];
            snprintf(what, sizeof what, "creating buffer %s", in->slots[s].name);
            mox_fail_text(err, err_len, what, st, NULL);
            return false;
        }
    }
    size_t count = in->port.count ? in->port.count : 1;
    m->args = calloc(count * WL_MAX_ARGS, sizeof *m->args);
    if (!m->args) {
        snprintf(err, err_len, "out of host memory");
        return false;
    }
    for (size_t l = 0; l < in->port.count; l++) {
        const wl_launch *launch = &in->port.launches[l];
        for (uint32_t a = 0; a < launch->arg_count; a++) {
            const wl_arg *src = &launch->args[a];
            mox_arg *dst = &m->args[l * WL_MAX_ARGS + a];
            if (src->kind == WL_ARG_BUFFER && (src->offset || !m->buffers[src->slot])) {
                snprintf(err, err_len, "launch %zu argument %u: port launches take whole buffers", l, a);
                return false;
            }
            if (src->kind == WL_ARG_BUFFER) {
                dst->kind = MOX_ARG_BUFFER;
                dst->access = src->access;
                dst->buffer = m->buffers[src->slot];
            } else {
                dst->kind = MOX_ARG_VALUE;
                dst->value = src->data ? src->data : src->value;
                dst->type = src->type;
            }
        }
    }
    return wl_mox_reset(m, err, err_len);
}

void wl_mox_close(wl_mox *m)
{
    for (uint32_t s = 0; s < WL_MAX_SLOTS; s++)
        mox_buffer_release(m->buffers[s]);
    free(m->args);
    memset(m, 0, sizeof *m);
}

bool wl_mox_reset(const wl_mox *m, char *err, size_t err_len)
{
    for (uint32_t s = 0; s < m->in->slot_count; s++) {
        if (!m->buffers[s])
            continue;
        const wl_slot *slot = &m->in->slots[s];
        void *poison = NULL;
        const void *data = slot->init;
        if (!data) {
            poison = malloc(wl_slot_bytes(m->in, s) + 1);
            if (!poison) {
                snprintf(err, err_len, "out of host memory");
                return false;
            }
            memset(poison, 0xff, wl_slot_bytes(m->in, s));
            data = poison;
        }
        mox_status st = mox_buffer_write(m->buffers[s], 0, slot->length, data);
        free(poison);
        if (st != MOX_OK) {
            mox_fail_text(err, err_len, slot->name, st, NULL);
            return false;
        }
    }
    return true;
}

mox_op *wl_mox_launch(const wl_mox *m, size_t index)
{
    const wl_launch *l = &m->in->port.launches[index];
    return mox_launch_generated(m->dev, m->in->workload->module, l->kernel, l->cfg,
                                &m->args[index * WL_MAX_ARGS], l->arg_count);
}

mox_status wl_mox_record(void *ctx, mox_batch *batch)
{
    const wl_mox *m = ctx;
    mox_status st = MOX_OK;
    for (size_t l = 0; st == MOX_OK && l < m->in->port.count; l++)
        st = mox_batch_push(batch, wl_mox_launch(m, l));
    return st;
}

static void no_wake(void *ctx)
{
    (void)ctx;
}

bool wl_mox_runs(const wl_mox *m, uint32_t runs, bool separate, char *err, size_t err_len)
{
    size_t per = separate ? m->in->port.count : 1, total = (size_t)runs * per;
    mox_op **ops = malloc((total ? total : 1) * sizeof *ops);
    if (!ops) {
        snprintf(err, err_len, "out of host memory");
        return false;
    }
    mox_waker waker = {no_wake, NULL};
    for (size_t i = 0; i < total; i++) {
        ops[i] = separate ? wl_mox_launch(m, i % per) : mox_sequence(m->dev, wl_mox_record, (void *)m);
        mox_op_poll(ops[i], waker);
    }
    bool ok = true;
    for (size_t i = 0; i < total; i++) {
        mox_status st = mox_op_wait(ops[i]);
        if (st != MOX_OK && ok) {
            char what[96];
            snprintf(what, sizeof what, "run %zu, %s %zu", i / per, separate ? "launch" : "sequence",
                     separate ? i % per : i);
            mox_fail_text(err, err_len, what, st, ops[i]);
            ok = false;
        }
        mox_op_drop(ops[i]);
    }
    free(ops);
    return ok;
}

void wl_outputs_free(void **outputs, uint32_t count)
{
    for (uint32_t o = 0; o < count; o++) {
        free(outputs[o]);
        outputs[o] = NULL;
    }
}

bool wl_mox_read(const wl_mox *m, void **outputs, char *err, size_t err_len)
{
    const wl_plan *p = &m->in->port;
    memset(outputs, 0, p->output_count * sizeof *outputs);
    for (uint32_t o = 0; o < p->output_count; o++) {
        uint32_t s = p->outputs[o];
        outputs[o] = malloc(wl_slot_bytes(m->in, s) + 1);
        mox_status st = outputs[o] ? mox_buffer_read(m->buffers[s], 0, m->in->slots[s].length, outputs[o])
                                   : MOX_ERR_OUT_OF_MEMORY;
        if (st != MOX_OK) {
            mox_fail_text(err, err_len, m->in->slots[s].name, st, NULL);
            wl_outputs_free(outputs, p->output_count);
            return false;
        }
    }
    return true;
}

bool wl_mox_verify(const wl_mox *m, char *why, size_t why_len)
{
    void *outputs[WL_MAX_SLOTS];
    if (!wl_mox_read(m, outputs, why, why_len))
        return false;
    bool ok = m->in->workload->verify(m->in, false, (const void *const *)outputs, why, why_len);
    wl_outputs_free(outputs, m->in->port.output_count);
    return ok;
}

bool wl_mox_state_after(const wl_mox *m, uint32_t runs, bool separate, bool one_by_one, void **outputs,
                        char *err, size_t err_len)
{
    memset(outputs, 0, m->in->port.output_count * sizeof *outputs);
    bool ok = wl_mox_reset(m, err, err_len);
    if (one_by_one)
        for (uint32_t r = 0; ok && r < runs; r++)
            ok = wl_mox_runs(m, 1, separate, err, err_len);
    else if (ok)
        ok = wl_mox_runs(m, runs, separate, err, err_len);
    return ok && wl_mox_read(m, outputs, err, err_len);
}
