/* dlrt/types.h: plain C types shared by the host API (dlrt.h) and the plugin ABI (plugin.h):
 * element types, tensor descriptors, typed attributes, device classes.
 *
 * ABI rules (see plugin.h for the full text): every struct that crosses the boundary starts
 * with `size_t struct_size` and only ever grows at its end; a reader never reads a field that
 * lies past the struct_size it was given. Enum values are never renumbered.
 *
 * This header is C99 and includes no C++ header.
 */
#ifndef DLRT_TYPES_H_
#define DLRT_TYPES_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fill a versioned struct's size field the way every caller must: the size *it* was built with.
 * e.g. `dlrt_tensor_desc d = {.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc)};` */
#define DLRT_STRUCT_SIZE(type) sizeof(type)

/* True when a struct of declared size `struct_size` contains `field` of `type`: the only
 * way a reader may decide whether an optional trailing field is present. */
#define DLRT_HAS_FIELD(type, field, struct_size) \
  (offsetof(type, field) + sizeof(((type*)0)->field) <= (struct_size))

/* ------------------------------------------------------------------------------------------
 * Element types. Stored as int32_t in structs so the size never depends on the compiler.
 * Values are only ever appended (10..13 came after 9): a plugin built before a value existed
 * has no case for it and declines every op that names it in its op support answer, so a host
 * never runs a kernel on a dtype the kernel does not know. Integer dtypes are two's complement
 * (signed) or plain binary (unsigned), little-endian like every dlrt tensor.
 */
typedef enum dlrt_dtype {
  DLRT_DTYPE_INVALID = 0,
  DLRT_F32 = 1,
  DLRT_F16 = 2,
  DLRT_BF16 = 3,
  DLRT_F64 = 4,
  DLRT_I32 = 5,
  DLRT_I64 = 6,
  DLRT_U8 = 7,
  DLRT_I8 = 8,
  DLRT_BOOL = 9, /* one byte, 0 or 1 */
  DLRT_U16 = 10,
  DLRT_U32 = 11,
  DLRT_U64 = 12,
  DLRT_I16 = 13
} dlrt_dtype;

/* Bytes per element of `dtype` (a dlrt_dtype as stored in structs); 0 for
 * DLRT_DTYPE_INVALID or a value that is not a dtype, so callers can reject it by the 0.
 * The one copy of this table for the core, the plugins, the SDK and the tests. */
static inline size_t dlrt_dtype_size(int32_t dtype) {
  switch (dtype) {
    case DLRT_F64:
    case DLRT_I64:
    case DLRT_U64:
      return 8;
    case DLRT_F32:
    case DLRT_I32:
    case DLRT_U32:
      return 4;
    case DLRT_F16:
    case DLRT_BF16:
    case DLRT_U16:
    case DLRT_I16:
      return 2;
    case DLRT_U8:
    case DLRT_I8:
    case DLRT_BOOL:
      return 1;
    default:
      return 0;
  }
}

/* The dtype's name as messages and docs/ops.md spell it: "f32", "f16", "bf16", "f64",
 * "i32", "i64", "u8", "i8", "bool", "u16", "u32", "u64", "i16"; NULL for DLRT_DTYPE_INVALID or a value that is not a
 * dtype (the caller says "dtype 42" or "invalid", as its message needs). Static storage. */
static inline const char* dlrt_dtype_name(int32_t dtype) {
  switch (dtype) {
    case DLRT_F32:
      return "f32";
    case DLRT_F16:
      return "f16";
    case DLRT_BF16:
      return "bf16";
    case DLRT_F64:
      return "f64";
    case DLRT_I32:
      return "i32";
    case DLRT_I64:
      return "i64";
    case DLRT_U8:
      return "u8";
    case DLRT_I8:
      return "i8";
    case DLRT_BOOL:
      return "bool";
    case DLRT_U16:
      return "u16";
    case DLRT_U32:
      return "u32";
    case DLRT_U64:
      return "u64";
    case DLRT_I16:
      return "i16";
    default:
      return NULL;
  }
}

/* The largest rank a tensor descriptor holds. */
#define DLRT_MAX_RANK 8

/* Memory layout of a tensor's bytes.
 * DLRT_LAYOUT_DENSE: row-major over `dims` as given, no padding (NHWC tensors are dense with
 * dims (N,H,W,C); NCHW tensors are dense with dims (N,C,H,W); the op's data_format attribute
 * says which). Values >= DLRT_LAYOUT_DEVICE_PRIVATE are opaque formats private to one plugin
 * (e.g. oneDNN's blocked layouts); only that plugin reads them, the host only sizes them
 * with the byte count the plugin reports. */
typedef enum dlrt_layout { DLRT_LAYOUT_DENSE = 0, DLRT_LAYOUT_DEVICE_PRIVATE = 1024 } dlrt_layout;

/* Describes a tensor's type and shape, not its storage. Caller-owned; plugins copy what they
 * keep. dims[rank..DLRT_MAX_RANK) are ignored. A rank-0 tensor is a scalar. */
typedef struct dlrt_tensor_desc {
  size_t struct_size;
  int32_t dtype; /* dlrt_dtype */
  int32_t rank;  /* 0..DLRT_MAX_RANK */
  int64_t dims[DLRT_MAX_RANK];
  int32_t layout; /* dlrt_layout */
  int32_t reserved0;
} dlrt_tensor_desc;

/* ------------------------------------------------------------------------------------------
 * Typed attributes: op attributes (strides, padding, ...), device properties, plugin options.
 * One struct holds every kind; `type` says which value fields are meaningful.
 */
typedef enum dlrt_attr_type {
  DLRT_ATTR_NONE = 0,
  DLRT_ATTR_INT = 1,    /* i */
  DLRT_ATTR_FLOAT = 2,  /* f */
  DLRT_ATTR_STRING = 3, /* s (NUL-terminated) */
  DLRT_ATTR_BOOL = 4,   /* i: 0 or 1 */
  DLRT_ATTR_DTYPE = 5,  /* i: a dlrt_dtype */
  DLRT_ATTR_INTS = 6,   /* ints[0..count) */
  DLRT_ATTR_FLOATS = 7  /* floats[0..count) */
} dlrt_attr_type;

/* Every pointer inside is owned by whoever made the attribute and lives at least as long as
 * the call that receives it (for device descriptions: as long as the plugin). */
typedef struct dlrt_attr {
  size_t struct_size;
  const char* name; /* e.g. "strides", "padding", "isa" */
  int32_t type;     /* dlrt_attr_type */
  int32_t reserved0;
  int64_t i;
  double f;
  const char* s;
  const int64_t* ints;
  const double* floats;
  size_t count; /* elements in ints or floats */
} dlrt_attr;

/* ------------------------------------------------------------------------------------------
 * Device classes: what kind of hardware, kept apart from the platform ("onednn", "cuda") and
 * from the device type used in names ("CPU", "GPU", "REF"). Placement prefers GPU, then ACCEL,
 * then CPU for ops nobody asked to place.
 */
typedef enum dlrt_device_class {
  DLRT_DEVICE_CLASS_UNKNOWN = 0,
  DLRT_DEVICE_CLASS_CPU = 1,
  DLRT_DEVICE_CLASS_GPU = 2,
  DLRT_DEVICE_CLASS_ACCEL = 3
} dlrt_device_class;

/* Log levels, for DLRT_LOG_LEVEL and host_api->log. */
typedef enum dlrt_log_level {
  DLRT_LOG_ERROR = 0,
  DLRT_LOG_WARNING = 1,
  DLRT_LOG_INFO = 2,
  DLRT_LOG_DEBUG = 3
} dlrt_log_level;

/* Reduction for collectives. */
typedef enum dlrt_reduce_op {
  DLRT_REDUCE_SUM = 0,
  DLRT_REDUCE_PROD = 1,
  DLRT_REDUCE_MAX = 2,
  DLRT_REDUCE_MIN = 3,
  DLRT_REDUCE_AVG = 4
} dlrt_reduce_op;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLRT_TYPES_H_ */
