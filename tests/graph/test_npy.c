/*
 * test_npy.c — .npy round trips for every dtype and rank 0..3, NumPy's own
 * header spellings, and the files vinci must refuse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vinci/graph.h"
#include "vt.h"

static char path[64];

static void test_round_trip_every_dtype(void)
{
    vt_rng rng = {42};
    for (int dt = 0; dt < VN_DTYPE_COUNT; dt++) {
        for (int32_t rank = 0; rank <= 3; rank++) {
            vn_tensor t = {{(vn_dtype)dt, rank, {3, 1, 5}}, NULL};
            if (rank == 3) t.desc.dims[1] = 0; /* an empty tensor too */
            size_t bytes = (size_t)vn_desc_numel(&t.desc) * vn_dtype_size((vn_dtype)dt);
            uint8_t *data = malloc(bytes + 1);
            for (size_t i = 0; i < bytes; i++)
                data[i] = dt == VN_BOOL ? (uint8_t)(vt_next(&rng) & 1) : (uint8_t)vt_next(&rng);
            t.data = data;
            VT_OK(vn_npy_write(path, &t));
            vn_tensor r;
            VT_OK(vn_npy_read(path, &r));
            bool same = r.desc.dtype == t.desc.dtype && r.desc.rank == rank &&
                        !memcmp(r.desc.dims, t.desc.dims, (size_t)rank * sizeof r.desc.dims[0]) &&
                        (bytes == 0 || !memcmp(r.data, data, bytes));
            VT_CHECK(same, "%s rank %d", vn_dtype_name((vn_dtype)dt), (int)rank);
            vn_aligned_free(r.data);
            free(data);
        }
    }
    FILE *f = fopen(path, "rb");
    char head[10];
    VT_CHECK(f && fread(head, 1, 10, f) == 10 && (10 + (head[8] & 0xff)) % 64 == 0,
             "data 64-byte aligned");
    if (f) fclose(f);
}

static vn_status parse_text(const char *header, const void *data, size_t bytes, vn_tensor *out,
                            int version)
{
    uint8_t buf[512];
    size_t hl = strlen(header), pre = version == 1 ? 10 : 12;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (uint8_t)version;
    buf[7] = 0;
    buf[8] = (uint8_t)hl;
    buf[9] = 0;
    buf[10] = buf[11] = 0;
    memcpy(buf + pre, header, hl);
    memcpy(buf + pre + hl, data, bytes);
    return vn_npy_parse(buf, pre + hl + bytes, "t.npy", out);
}

static void test_numpy_spellings(void)
{
    double d[3] = {1.5, -2.25, 1e10};
    vn_tensor t;
    VT_OK(parse_text("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }\n", d, sizeof d, &t,
                     1));
    VT_CHECK(t.desc.dtype == VN_F64 && ((double *)t.data)[2] == 1e10, "f64 kept");
    vn_aligned_free(t.data);
    int8_t b[2] = {0, 1};
    VT_OK(parse_text("{\"descr\":\"|i1\",\"fortran_order\":False,\"shape\":(1,2)}", b, 2, &t, 2));
    VT_CHECK(t.desc.rank == 2 && t.desc.dims[1] == 2 && t.desc.dtype == VN_I8, "v2, compact");
    vn_aligned_free(t.data);
    VT_OK(parse_text("{'descr': '>i1', 'fortran_order': False, 'shape': (2,), }", b, 2, &t, 1));
    vn_aligned_free(t.data);
}

static void test_rejected(void)
{
    float f[4] = {0};
    vn_tensor t;
    const struct {
        const char *header;
        size_t bytes;
        vn_status want;
        const char *msg;
    } bad[] = {
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, VN_ERR_UNSUPPORTED,
         "Fortran order"},
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", 16, VN_ERR_UNSUPPORTED,
         "big-endian"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16, VN_ERR_UNSUPPORTED,
         "'<c8' is not supported"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", 16, VN_ERR_FORMAT,
         "holds 16 bytes of data, shape needs 20"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 16, VN_ERR_FORMAT,
         "bad dim"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4,
         VN_ERR_UNSUPPORTED, "rank above"},
        {"{'descr': '<f4', 'shape': (4,), }", 16, VN_ERR_FORMAT, "fortran_order"},
        {"{'fortran_order': False, 'shape': (4,), }", 16, VN_ERR_FORMAT, "descr"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 16,
         VN_ERR_FORMAT, "too large"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vn_status st = parse_text(bad[i].header, f, bad[i].bytes, &t, 1);
        VT_CHECK(st == bad[i].want, "case %zu: %s: %s", i, vn_status_name(st), vn_last_error());
        VT_CONTAINS(vn_last_error(), bad[i].msg);
    }
    VT_CHECK(vn_npy_parse("\x93NUMPX\x01\x00\x00\x00", 10, "x", &t) == VN_ERR_FORMAT, "magic");
    VT_CHECK(vn_npy_parse("\x93NUMPY\x01\x00\xff\x00", 10, "x", &t) == VN_ERR_FORMAT, "header len");
    VT_CHECK(vn_npy_parse("\x93NUMPY\x09\x00\x00\x00", 10, "x", &t) == VN_ERR_FORMAT, "version");
    VT_CHECK(vn_npy_parse("\x93NUM", 4, "x", &t) == VN_ERR_FORMAT, "short");
    VT_CHECK(vn_npy_read("/nonexistent/x.npy", &t) == VN_ERR_IO, "missing file");
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/vinci_npy_%d.npy", (int)getpid());
    VT_RUN(test_round_trip_every_dtype);
    VT_RUN(test_numpy_spellings);
    VT_RUN(test_rejected);
    unlink(path);
    return vt_summary();
}
