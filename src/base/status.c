/*
 * status.c — status names and the thread-local last-error message.
 *
 * Invariant: the message buffer of a thread always holds a NUL-terminated
 * string; vn_error() truncates, never overflows.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vinci/base.h"

static _Thread_local char last_error[1024];

static const char *const status_names[VN_STATUS_COUNT] = {
    [VN_OK] = "VN_OK",
    [VN_ERR_INVALID_ARG] = "VN_ERR_INVALID_ARG",
    [VN_ERR_SHAPE] = "VN_ERR_SHAPE",
    [VN_ERR_DTYPE] = "VN_ERR_DTYPE",
    [VN_ERR_UNSUPPORTED] = "VN_ERR_UNSUPPORTED",
    [VN_ERR_OUT_OF_MEMORY] = "VN_ERR_OUT_OF_MEMORY",
    [VN_ERR_KERNEL] = "VN_ERR_KERNEL",
    [VN_ERR_TIMEOUT] = "VN_ERR_TIMEOUT",
    [VN_ERR_NOT_READY] = "VN_ERR_NOT_READY",
    [VN_ERR_STATE] = "VN_ERR_STATE",
    [VN_ERR_IO] = "VN_ERR_IO",
    [VN_ERR_FORMAT] = "VN_ERR_FORMAT",
    [VN_ERR_INTERNAL] = "VN_ERR_INTERNAL",
};
_Static_assert(VN_STATUS_COUNT == 13, "add the new status to status_names");

const char *vn_status_name(vn_status status)
{
    if ((unsigned)status >= VN_STATUS_COUNT) return "VN_ERR_UNKNOWN";
    return status_names[status];
}

const char *vn_last_error(void)
{
    return last_error;
}

void vn_clear_error(void)
{
    last_error[0] = '\0';
}

vn_status vn_error(vn_status status, const char *where, const char *fmt, ...)
{
    int used = snprintf(last_error, sizeof last_error, "%s: ", where ? where : "vinci");
    if (used < 0 || (size_t)used >= sizeof last_error) used = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error + used, sizeof last_error - (size_t)used, fmt, ap);
    va_end(ap);
    return status;
}
