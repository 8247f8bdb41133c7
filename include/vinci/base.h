/*
 * vinci/base.h — the bottom layer: status codes and error text, dtypes and
 * their exact conversions, CPU feature detection and ISA choice, aligned memory.
 *
 * Every public vinci function that can fail returns a vn_status. When it is not
 * VN_OK, vn_last_error() returns a message for the calling thread that says what
 * went wrong and where ("vn_op_plan_create(Add): input 1 shape [3,4] does not
 * broadcast with [2,4]"). No vinci function aborts or exits on bad input.
 */
#ifndef VINCI_BASE_H
#define VINCI_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status and errors ------------------------------------------------ */

typedef enum vn_status {
    VN_OK = 0,
    VN_ERR_INVALID_ARG,   /* a NULL where a value is needed, a bad attribute, a bad option */
    VN_ERR_SHAPE,         /* shapes that do not fit the operation */
    VN_ERR_DTYPE,         /* a dtype the operation does not accept */
    VN_ERR_UNSUPPORTED,   /* a legal request vinci does not implement */
    VN_ERR_OUT_OF_MEMORY, /* allocation failed or a memory limit was hit */
    VN_ERR_KERNEL,        /* a kernel failed: a checked-mode violation or a runtime error */
    VN_ERR_TIMEOUT,       /* a wait ran past its deadline */
    VN_ERR_NOT_READY,     /* a query found work still pending (not a failure) */
    VN_ERR_STATE,         /* a call in the wrong state (e.g. would deadlock) */
    VN_ERR_IO,            /* a file could not be read or written */
    VN_ERR_FORMAT,        /* a malformed file or message */
    VN_ERR_INTERNAL,      /* a bug in vinci: please report it */
    VN_STATUS_COUNT
} vn_status;

/* Short constant name of a status, e.g. "VN_ERR_SHAPE". Never NULL. */
const char *vn_status_name(vn_status status);

/* The calling thread's last error message ("" when none). The text stays valid
 * until the next vinci call on this thread. */
const char *vn_last_error(void);

/* Forget the calling thread's last error. */
void vn_clear_error(void);

/* Record an error for the calling thread and return `status` (so callers can
 * write `return vn_error(VN_ERR_SHAPE, "vn_foo", "rank %d > 8", r);`).
 * `where` names the public call or the component. Used by vinci itself and by
 * user-written operators. */
vn_status vn_error(vn_status status, const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- dtypes ------------------------------------------------------------ */

typedef enum vn_dtype {
    VN_F32 = 0,
    VN_F16,
    VN_BF16,
    VN_I8,
    VN_U8,
    VN_I32,
    VN_I64,
    VN_BOOL, /* one byte, 0 or 1 */
    /* Appended after bool: the values above are stored in .vnm files. */
    VN_F64,
    VN_I16,
    VN_U16,
    VN_U32,
    VN_U64,
    VN_DTYPE_COUNT
} vn_dtype;

/* Bytes per element (bool is one byte). 0 for an invalid dtype. */
size_t vn_dtype_size(vn_dtype dtype);
/* "f32", "f16", "bf16", "i8", "u8", "i32", "i64", "bool", "f64", "i16", "u16",
 * "u32", "u64"; "invalid" otherwise. */
const char *vn_dtype_name(vn_dtype dtype);
/* Parses the names above. */
vn_status vn_dtype_from_name(const char *name, vn_dtype *out);
static inline bool vn_dtype_valid(vn_dtype d)
{
    return (unsigned)d < VN_DTYPE_COUNT;
}

/* Exact scalar conversions: round to nearest even; NaN stays NaN (quiet),
 * Inf stays Inf, subnormals are produced and read exactly. */
uint16_t vn_f32_to_f16(float x);
float vn_f16_to_f32(uint16_t h);
uint16_t vn_f32_to_bf16(float x);
float vn_bf16_to_f32(uint16_t b);

/* The same conversions over arrays, vectorised with F16C / AVX-512 where the
 * active ISA allows; bit-identical to the scalar forms. */
void vn_f32_to_f16_array(const float *src, uint16_t *dst, size_t n);
void vn_f16_to_f32_array(const uint16_t *src, float *dst, size_t n);
void vn_f32_to_bf16_array(const float *src, uint16_t *dst, size_t n);
void vn_bf16_to_f32_array(const uint16_t *src, float *dst, size_t n);

/* ---- CPU features and the ISA path ----------------------------------- */

typedef enum vn_isa {
    VN_ISA_SCALAR = 0, /* plain C (still compiled -O3 for baseline x86-64) */
    VN_ISA_AVX2,       /* AVX2 + FMA + F16C */
    VN_ISA_AVX512,     /* AVX-512 F/BW/DQ/VL + FMA + F16C */
    VN_ISA_COUNT
} vn_isa;

typedef struct vn_cpu_features {
    bool sse42, avx, avx2, fma, f16c;
    bool avx512f, avx512bw, avx512dq, avx512vl;
    bool avx512_vnni, avx512_bf16, avx512_fp16;
    bool amx_tile, amx_bf16, amx_int8;     /* Advanced Matrix Extensions (tile registers) */
    bool os_avx, os_avx512;                /* XGETBV says the OS saves the registers */
    bool os_amx;                           /* ... and the tile configuration and data */
    int32_t l1d_bytes, l2_bytes, l3_bytes; /* per core / shared; 0 if unknown */
} vn_cpu_features;

/* Features of this CPU, detected once (thread-safe). */
const vn_cpu_features *vn_cpu_features_get(void);
/* Best ISA this CPU and OS support. */
vn_isa vn_isa_detected(void);
/* The ISA every vinci kernel uses in this process: chosen once at first use
 * from CPUID, lowered by the environment variable VINCI_ISA=avx512|avx2|scalar
 * (a request above what the CPU supports is clamped to the detected ISA). */
vn_isa vn_isa_active(void);
/* "scalar", "avx2", "avx512". */
const char *vn_isa_name(vn_isa isa);

/* ---- memory -------------------------------------------------------------- */

/* Aligned allocation (alignment a power of two >= sizeof(void*)); NULL and an
 * error message on failure. Free with vn_aligned_free. */
void *vn_aligned_alloc(size_t bytes, size_t alignment);
void vn_aligned_free(void *p);

#ifdef __cplusplus
}
#endif
#endif /* VINCI_BASE_H */
