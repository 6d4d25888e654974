/* alloc.h - the runtime's host allocator, with a test hook that makes the
 * Nth allocation fail so tests can walk every out-of-memory path. */
#ifndef MOX_CORE_ALLOC_H
#define MOX_CORE_ALLOC_H

#include <stddef.h>

void *mox__malloc(size_t size);
void *mox__calloc(size_t count, size_t size);
void *mox__realloc(void *ptr, size_t size);
void mox__free(void *ptr);
char *mox__str_dup(const char *text);

#endif
