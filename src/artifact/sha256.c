/* sha256.c - SHA-256 as lowercase hex through OpenSSL's EVP interface, used
 * for the ABI hash bindings embed and for artifact file hashes. The digest
 * is fetched once (mox_sha256_init) and kept for the process. */
#include "sha256.h"

#include <stdatomic.h>

#include <openssl/evp.h>

static _Atomic(EVP_MD *) sha256;

bool mox_sha256_init(void)
{
    if (atomic_load_explicit(&sha256, memory_order_acquire))
        return true;
    EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (!md)
        return false;
    EVP_MD *none = NULL;
    if (!atomic_compare_exchange_strong(&sha256, &none, md))
        EVP_MD_free(md); /* another thread was first */
    return true;
}

bool mox_sha256_hex(const void *data, size_t size, char hex[MOX_SHA256_HEX_LEN + 1])
{
    static const char digits[] = "0123456789abcdef";
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    /* EVP_Digest wants a valid pointer even for zero bytes. */
    static const unsigned char empty[1] = {0};
    hex[0] = '\0';
    if (!mox_sha256_init())
        return false;
    if (EVP_Digest(size ? data : empty, size, digest, &digest_len,
                   atomic_load_explicit(&sha256, memory_order_acquire), NULL) != 1 ||
        digest_len != 32)
        return false;
    for (unsigned int i = 0; i < 32; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[MOX_SHA256_HEX_LEN] = '\0';
    return true;
}

bool mox_sha256_is_hex(const char *text)
{
    if (!text)
        return false;
    for (int i = 0; i < MOX_SHA256_HEX_LEN; i++) {
        char c = text[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return text[MOX_SHA256_HEX_LEN] == '\0';
}
