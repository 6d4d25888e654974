/* sha256.h - SHA-256 through OpenSSL's libcrypto (EVP), as lowercase hex. */
#ifndef MOX_ARTIFACT_SHA256_H
#define MOX_ARTIFACT_SHA256_H
#include <stdbool.h>
#include <stddef.h>
#define MOX_SHA256_HEX_LEN 64
/* hex must hold 65 bytes. Returns false only if libcrypto fails, which,
 * once mox_sha256_init has succeeded, means it ran out of memory. */
bool mox_sha256_hex(const void *data, size_t size, char hex[MOX_SHA256_HEX_LEN + 1]);
/* What to say when mox_sha256_hex fails. */
#define MOX_SHA256_FAILED "out of memory (libcrypto's SHA-256 failed)"
/* Has libcrypto initialise itself and look up SHA-256 once, so that later
 * hashing only allocates per call. libcrypto's one-time initialisation does
 * not recover from a failed allocation (a NULL lock is left behind), so
 * libmox calls this when a device opens, before any user work; later calls
 * are free. False when libcrypto could not (out of memory); a later call
 * tries again. mox_sha256_hex calls it too. */
bool mox_sha256_init(void);
bool mox_sha256_is_hex(const char *text); /* 64 lowercase hex chars */
#endif
