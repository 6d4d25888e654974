/* mox/export.h - symbol visibility for the public API.
 * libmox is built with -fvisibility=hidden; MOX_API marks what it exports. */
#ifndef MOX_EXPORT_H
#define MOX_EXPORT_H
#if defined(MOX_BUILDING_LIBRARY)
#define MOX_API __attribute__((visibility("default")))
#else
#define MOX_API
#endif
#endif
