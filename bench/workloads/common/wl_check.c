/* wl_check.c - comparisons of a run's outputs with gold results; each
 * says what it compared and how close it came (see wl.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wl.h"

bool wl_fail(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return false;
}

bool wl_check_bits(const void *got, const void *want, size_t n, size_t elem, const char *what, char *why,
                   size_t why_len)
{
    const unsigned char *g = got, *w = want;
    for (size_t i = 0; i < n; i++)
        if (memcmp(g + i * elem, w + i * elem, elem) != 0) {
            uint32_t gv = 0, wv = 0;
            memcpy(&gv, g + i * elem, elem < 4 ? elem : 4);
            memcpy(&wv, w + i * elem, elem < 4 ? elem : 4);
            snprintf(why, why_len, "%s: element %zu of %zu differs (0x%08x, expected 0x%08x)", what, i, n, gv,
                     wv);
            return false;
        }
    snprintf(why, why_len, "%s: %zu elements bit-identical", what, n);
    return true;
}

bool wl_check_l1(const float *got, const float *want, size_t n, double limit, const char *what, char *why,
                 size_t why_len)
{
    double sum_delta = 0, sum_ref = 0, max_delta = 0;
    size_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)want[i]);
        if (!(d <= max_delta)) { /* NaN counts as the worst */
            max_delta = isnan(d) ? INFINITY : d;
            worst = i;
        }
        sum_delta += isnan(d) ? INFINITY : d;
        sum_ref += fabs((double)want[i]);
    }
    double l1 = sum_ref > 0 ? sum_delta / sum_ref : sum_delta;
    bool ok = l1 <= limit;
    snprintf(why, why_len, "%s: L1 norm %.3e (limit %.0e) over %zu values, max abs error %.3e at %zu%s", what,
             l1, limit, n, max_delta, worst, ok ? "" : " - too far");
    return ok;
}

bool wl_check_abs(const float *got, const float *want, size_t n, double limit, const char *what, char *why,
                  size_t why_len)
{
    double max_delta = 0;
    size_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)want[i]);
        if (!(d <= max_delta)) {
            max_delta = isnan(d) ? INFINITY : d;
            worst = i;
        }
    }
    bool ok = max_delta <= limit;
    snprintf(why, why_len, "%s: max abs error %.3e (limit %.0e) over %zu values at %zu%s", what, max_delta,
             limit, n, worst, ok ? "" : " - too far");
    return ok;
}
