/* mox/mox.h - the whole host API of mox. */
#ifndef MOX_MOX_H
#define MOX_MOX_H
#include <mox/status.h>
#include <mox/types.h>
#include <mox/device.h>
#include <mox/buffer.h>
#include <mox/launch.h>
#include <mox/op.h>
#include <mox/sequence.h>
#include <mox/module.h>
#include <mox/trace.h>
#define MOX_VERSION_MAJOR 0
#define MOX_VERSION_MINOR 1
#define MOX_VERSION_PATCH 0
#define MOX_VERSION_STRING "0.1.0"
#endif
