/*
 * onnx_external.c — tensor data stored in a file next to the model
 * (data_location = EXTERNAL). The location is untrusted: it must be a
 * relative path inside the model's folder, with no ".." component, and after
 * symbolic links are resolved it must still be inside that folder.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/onnx.h"

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static vn_status
ext_fail(vn_pb *pb, const vn_onnx_tensor *t, vn_status status, const char *fmt, ...)
{
    char what[512], path[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return vn_error(status, pb->file, "byte %zu: %s: tensor '%s': external data: %s", t->offset,
                    vn_pb_path(pb, path, sizeof path), t->name, what);
}

static bool has_dotdot(const char *p)
{
    for (const char *s = p; *s;) {
        size_t n = strcspn(s, "/\\");
        if (n == 2 && s[0] == '.' && s[1] == '.') return true;
        s += n;
        if (*s) s++;
    }
    return false;
}

/* The resolved path of the location, confined to g->dir. */
static vn_status confine(vn_pb *pb, const vn_onnx_tensor *t, vn_graph *g, char *resolved)
{
    const char *loc = t->location;
    if (!g->dir)
        return ext_fail(pb, t, VN_ERR_FORMAT,
                        "'%s': the model was loaded from memory without a "
                        "folder",
                        loc ? loc : "");
    if (!loc || !loc[0]) return ext_fail(pb, t, VN_ERR_FORMAT, "no location given");
    if (loc[0] == '/' || loc[0] == '\\' || has_dotdot(loc))
        return ext_fail(pb, t, VN_ERR_FORMAT,
                        "location '%s' leaves the model's folder (absolute or '..')", loc);
    char joined[PATH_MAX], dir[PATH_MAX];
    if (snprintf(joined, sizeof joined, "%s/%s", g->dir, loc) >= (int)sizeof joined)
        return ext_fail(pb, t, VN_ERR_FORMAT, "location '%s' is too long", loc);
    if (!realpath(g->dir, dir) || !realpath(joined, resolved))
        return ext_fail(pb, t, VN_ERR_IO, "cannot open '%s'", joined);
    size_t n = strlen(dir);
    if (strncmp(resolved, dir, n) != 0 || (resolved[n] != '/' && strcmp(dir, "/") != 0))
        return ext_fail(pb, t, VN_ERR_FORMAT, "'%s' resolves outside the model's folder", loc);
    return VN_OK;
}

static vn_status read_range(vn_pb *pb, const vn_onnx_tensor *t, int fd, size_t bytes, void **data)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return ext_fail(pb, t, VN_ERR_IO, "'%s' is not a regular file", t->location);
    long long off = t->ext_offset < 0 ? 0 : t->ext_offset;
    long long len = t->ext_length < 0 ? (long long)sb.st_size - off : t->ext_length;
    if (off > (long long)sb.st_size || len > (long long)sb.st_size - off)
        return ext_fail(pb, t, VN_ERR_FORMAT,
                        "'%s': offset %lld + length %lld runs past the end of the file",
                        t->location, off, len);
    if ((unsigned long long)len != bytes)
        return ext_fail(pb, t, VN_ERR_FORMAT, "'%s': length %lld, its dims need %lld bytes",
                        t->location, len, (long long)bytes);
    *data = malloc(bytes ? bytes : 1);
    if (!*data) return vn_error(VN_ERR_OUT_OF_MEMORY, pb->file, "no memory for %zu bytes", bytes);
    size_t done = 0;
    while (done < bytes) {
        ssize_t r = pread(fd, (char *)*data + done, bytes - done, (off_t)(off + (long long)done));
        if (r <= 0) {
            free(*data);
            *data = NULL;
            return ext_fail(pb, t, VN_ERR_IO, "'%s': read failed at byte %lld", t->location,
                            off + (long long)done);
        }
        done += (size_t)r;
    }
    return VN_OK;
}

vn_status vn_onnx_external_read(vn_pb *pb, const vn_onnx_tensor *t, vn_graph *g, size_t bytes,
                                void **data)
{
    char resolved[PATH_MAX];
    *data = NULL;
    vn_status st = confine(pb, t, g, resolved);
    if (st != VN_OK) return st;
    int fd = open(resolved, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ext_fail(pb, t, VN_ERR_IO, "cannot open '%s'", resolved);
    st = read_range(pb, t, fd, bytes, data);
    close(fd);
    return st;
}
