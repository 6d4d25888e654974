/* sha256.h - SHA-256 through OpenSSL's libcrypto (EVP), as lowercase hex. */
#ifndef MOX_ARTIFACT_SHA256_H
#define MOX_ARTIFACT_SHA256_H
#include <stdbool.h>
#include <stddef.h>
#define MOX_SHA256_HEX_LEN 64
/* hex must hold 65 bytes. Returns false only if libcrypto fails. */
bool mox_sha256_hex(const void *data, size_t size, char hex[MOX_SHA256_HEX_LEN + 1]);
bool mox_sha256_is_hex(const char *text); /* 64 lowercase hex chars */
#endif
