/* dlrt/dlrt.h: the host C API of libdlrt. What an application embeds: a context that loads
 * the device plugins, the devices they offer, tensors and eager ops, graphs and executables,
 * data files and checkpoints, and distribution (one section each, in that order).
 *
 * Conventions:
 *   - Fallible functions return dlrt_status* (NULL = OK; see status.h). Out-parameters come
 *     last and are set to NULL/0 on entry.
 *   - Versioned structs start with struct_size: initialise them with the matching
 *     dlrt_*_init function (or DLRT_STRUCT_SIZE) so newer libraries read them safely.
 *   - Every pointer says who owns it. Strings returned inside info structs are owned by the
 *     context and live until dlrt_context_destroy.
 *   - A context is thread-safe for queries; see each function for more.
 *
 * This header is C99 and includes no C++ header. dlrt.hpp is the C++ layer over it.
 */
#ifndef DLRT_DLRT_H_
#define DLRT_DLRT_H_

#include "dlrt/status.h"
#include "dlrt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* libdlrt's own version (not the ABI version), e.g. "0.1.0". Static string. */
DLRT_API const char* dlrt_version(void);
/* The plugin ABI this library speaks: major, minor and the oldest minor it accepts. */
DLRT_API void dlrt_abi_version(uint32_t* out_major, uint32_t* out_minor, uint32_t* out_floor);

/* ==========================================================================================
 * Device specs in TensorFlow's grammar:
 *   /job:<name>/replica:<n>/task:<n>/device:<TYPE>:<n>
 * every part optional; the short forms "/GPU:0", "GPU:0", "/device:GPU:0", "gpu:0", "cpu" and
 * "GPU" are accepted. Types are case-insensitive and stored upper-case.
 */
typedef struct dlrt_device_spec {
  size_t struct_size;
  char job[64];    /* "" when absent */
  int32_t replica; /* -1 when absent */
  int32_t task;    /* -1 when absent */
  char type[32];   /* "CPU", "GPU", ...; "" when absent */
  int32_t index;   /* -1 when absent ("any device of that type") */
} dlrt_device_spec;

/* Parse `text`. A malformed spec is INVALID_ARGUMENT naming the part that is wrong and what
 * was expected. `out->struct_size` must be set by the caller. */
DLRT_API dlrt_status* dlrt_device_spec_parse(const char* text, dlrt_device_spec* out);
/* Write the canonical full form "/job:localhost/replica:0/task:0/device:GPU:0" (absent parts
 * take those defaults; an absent index becomes 0) into buf; returns the length it needs. */
DLRT_API size_t dlrt_device_spec_format(const dlrt_device_spec* spec, char* buf, size_t buf_size);

/* ==========================================================================================
 * Contexts: own the loaded plugins, the device registry and everything made on them.
 */
typedef struct dlrt_context dlrt_context;

/* Split one physical device into `count` logical devices, as TensorFlow's
 * set_logical_device_configuration does. Each logical device gets the physical device's
 * kernels and its own memory arena (limit memory_limits[i] bytes, 0 = no limit). */
typedef struct dlrt_logical_device_config {
  size_t struct_size;
  const char* physical_device; /* a device spec: "CPU:0", "/device:GPU:0" */
  int32_t count;               /* >= 1 */
  int32_t reserved0;
  const uint64_t* memory_limits; /* NULL, or `count` limits in bytes */
} dlrt_logical_device_config;

typedef struct dlrt_context_options {
  size_t struct_size;
  /* Plugin files or folders searched first, in order (absolute paths). Caller-owned. */
  const char* const* plugin_paths;
  size_t num_plugin_paths;
  /* 1 (default): also search DLRT_PLUGIN_PATH, the install's lib/dlrt/plugins and the build
   * tree's plugin folder. 0: only plugin_paths. */
  int32_t search_default_paths;
  /* -1 (default): from DLRT_LOG_LEVEL, else WARNING. Otherwise a dlrt_log_level. */
  int32_t log_level;
  /* Which devices to expose, e.g. "CPU:0,GPU:1" or "GPU" (all GPUs). NULL (default): from
   * DLRT_VISIBLE_DEVICES, else all. Visible devices are renumbered per type in list order. */
  const char* visible_devices;
  /* Per-plugin options "cpu:threads=2;reference:num_devices=3". NULL: from
   * DLRT_PLUGIN_OPTIONS, else none. Unknown keys are an error of that plugin's load. */
  const char* plugin_options;
  /* Logical device splits, applied after visibility. Caller-owned array. */
  const dlrt_logical_device_config* logical_devices;
  size_t num_logical_devices;
  /* Placement log (TensorFlow's set_log_device_placement): -1 (default) = from
   * DLRT_LOG_DEVICE_PLACEMENT, else off; 0 off; 1 on. */
  int32_t log_device_placement;
  /* Soft placement: -1 (default) = on; 0 = strict; 1 = on. */
  int32_t soft_placement;
  /* ---- device memory (added at the end: read only when struct_size reaches them) ----
   * Memory growth of GPU-class devices (TensorFlow's set_memory_growth): -1 (default) = from
   * DLRT_GPU_ALLOW_GROWTH, else on; 1 = on: take memory from the plugin as it is needed;
   * 0 = off: at a device's first allocation reserve memory_fraction of its physical device's
   * free memory (split evenly between its logical devices) and serve everything from that.
   * CPU-class devices always grow. */
  int32_t memory_growth;
  int32_t reserved0; /* 0 */
  /* With growth off, the fraction of free memory to reserve: (0, 1]; 0 (default) = 0.9. */
  double memory_fraction;
  /* Hard limit, in bytes, per GPU-class logical device: 0 (default) = from
   * DLRT_GPU_MEMORY_LIMIT_MB (MiB), else none. A logical device config's memory_limits entry
   * (non-zero) wins over it. Out of memory is RESOURCE_EXHAUSTED naming the device, the
   * request, the bytes in use, the peak and the limit. */
  uint64_t gpu_memory_limit;
  /* ---- plugin isolation (added at the end: read only when struct_size reaches them) ----
   * isolate_plugins 1: before loading each plugin, dlopen it and run dlrt_plugin_init in a
   * child process (fork); a plugin that crashes (e.g. SIGSEGV), exits or does not return
   * within isolate_timeout_s there is recorded FAILED (phase ABI) with a message saying so,
   * and never loaded into this process. 0 (default): load in-process directly (no fork).
   * dlprobe turns it on unless --no-isolate. */
  int32_t isolate_plugins;
  int32_t reserved1; /* 0 */
  /* Seconds the child may take: 0 (default) = 10 s. */
  double isolate_timeout_s;
} dlrt_context_options;

/* Fill `options` with the defaults (including struct_size). */
DLRT_API void dlrt_context_options_init(dlrt_context_options* options);

/* Load plugins and build the device registry. A plugin that fails to load is recorded (see
 * dlrt_context_plugin_info) and never stops the others; the context is still created even if
 * no plugin loads. Errors: INVALID_ARGUMENT for bad options (a malformed visible-device list,
 * a logical device config naming a missing device). `options` may be NULL (defaults). */
DLRT_API dlrt_status* dlrt_context_create(const dlrt_context_options* options,
                                          dlrt_context** out_context);
/* Close every device and unload every plugin. NULL is accepted. */
DLRT_API void dlrt_context_destroy(dlrt_context* context);

/* ---- plugins --------------------------------------------------------------------------- */

typedef enum dlrt_plugin_state {
  DLRT_PLUGIN_LOADED = 0,  /* loaded; it may still have no devices (see devices_error) */
  DLRT_PLUGIN_REFUSED = 1, /* not loaded for a rule: permissions, ABI version, missing entry */
  DLRT_PLUGIN_FAILED = 2   /* tried and failed: open, entry symbol, init or create failed */
} dlrt_plugin_state;

/* The phase a plugin's load got to. */
typedef enum dlrt_plugin_phase {
  DLRT_PHASE_SEARCH = 0,  /* found the file; checking permissions */
  DLRT_PHASE_OPEN = 1,    /* dlopen and entry-symbol lookup */
  DLRT_PHASE_ABI = 2,     /* dlrt_plugin_init and version / required-entry checks */
  DLRT_PHASE_CREATE = 3,  /* plugin_create */
  DLRT_PHASE_DEVICES = 4, /* device_count / device_get_desc */
  DLRT_PHASE_READY = 5
} dlrt_plugin_phase;

/* Owned by the context; strings live until dlrt_context_destroy. */
typedef struct dlrt_plugin_info {
  size_t struct_size;
  const char* path;     /* absolute canonical path */
  const char* name;     /* from the plugin; "" if it never said */
  const char* platform; /* from the plugin; "" if it never said */
  const char* version;
  int32_t state;      /* dlrt_plugin_state */
  int32_t phase;      /* dlrt_plugin_phase reached (where it stopped, when not LOADED) */
  uint32_t abi_major; /* what the plugin declared; 0 if unknown */
  uint32_t abi_minor;
  int32_t error_code;   /* dlrt_code of the failure, or of devices_error when LOADED */
  int32_t device_count; /* devices it reported (before visibility filtering) */
  const char* error;    /* why it was refused/failed, or why it has no devices; "" if none */
} dlrt_plugin_info;

DLRT_API size_t dlrt_context_plugin_count(const dlrt_context* context);
/* OUT_OF_RANGE if index >= count. `out->struct_size` must be set by the caller. */
DLRT_API dlrt_status* dlrt_context_plugin_info(const dlrt_context* context, size_t index,
                                               dlrt_plugin_info* out);

/* ---- devices --------------------------------------------------------------------------- */

/* One visible (possibly logical) device. Owned by the context. */
typedef struct dlrt_device_info {
  size_t struct_size;
  const char* name;       /* canonical short name "/device:GPU:0" */
  const char* full_name;  /* "/job:localhost/replica:0/task:0/device:GPU:0" */
  const char* type;       /* "GPU" */
  int32_t index;          /* the N in TYPE:N */
  int32_t device_class;   /* dlrt_device_class */
  const char* platform;   /* "cuda" */
  const char* plugin;     /* plugin name, "cuda" */
  int32_t plugin_ordinal; /* the physical device's ordinal inside its plugin */
  int32_t logical_index;  /* which split of the physical device (0 when not split) */
  int32_t logical_count;  /* how many splits the physical device has (1 when not split) */
  int32_t reserved0;
  uint64_t memory_total; /* bytes of the physical device */
  uint64_t memory_limit; /* this logical device's limit, 0 = none */
  /* The plugin's description; its strings and attrs live until dlrt_context_destroy. */
  const char* model; /* desc.name, e.g. "NVIDIA H200" */
  const char* vendor;
  const char* pci_bus_id;
  const char* uuid;
  int32_t compute_capability_major;
  int32_t compute_capability_minor;
  int32_t core_count;
  int32_t reserved1;
  const char* driver_version;
  const char* library_versions;
  double peak_gflops;
  double memory_bandwidth_gbps;
  double launch_overhead_us;
  size_t num_attrs;
  const dlrt_attr* const* attrs;
} dlrt_device_info;

DLRT_API size_t dlrt_context_device_count(const dlrt_context* context);
/* OUT_OF_RANGE if index >= count. `out->struct_size` must be set by the caller. */
DLRT_API dlrt_status* dlrt_context_device_info(const dlrt_context* context, size_t index,
                                               dlrt_device_info* out);
/* Current free bytes of device `index`'s physical device, as its plugin reports them. */
DLRT_API dlrt_status* dlrt_context_device_memory_free(dlrt_context* context, size_t index,
                                                      uint64_t* out_free);
/* Find the visible device matching `spec` ("GPU:0", "/device:CPU:0", "cpu" = the first CPU).
 * NOT_FOUND names the spec and lists the devices there are; INVALID_ARGUMENT for a malformed
 * spec. A job/replica/task other than localhost/0/0 is NOT_FOUND in a single-process context. */
DLRT_API dlrt_status* dlrt_context_find_device(const dlrt_context* context, const char* spec,
                                               size_t* out_index);

/* ---- effective settings (dlprobe --env) ------------------------------------------------ */

typedef enum dlrt_setting_source {
  DLRT_SOURCE_DEFAULT = 0,
  DLRT_SOURCE_ENVIRONMENT = 1,
  DLRT_SOURCE_API = 2
} dlrt_setting_source;

typedef struct dlrt_setting {
  size_t struct_size;
  const char* name;  /* e.g. "DLRT_LOG_LEVEL" */
  const char* value; /* effective value as text; "" when unset */
  int32_t source;    /* dlrt_setting_source */
  int32_t reserved0;
  const char* help; /* one line: what it does */
} dlrt_setting;

DLRT_API size_t dlrt_context_setting_count(const dlrt_context* context);
DLRT_API dlrt_status* dlrt_context_setting(const dlrt_context* context, size_t index,
                                           dlrt_setting* out);

/* ==========================================================================================
 * Tensors and eager ops.
 *
 * A dlrt_tensor is a buffer on one visible device plus its descriptor. Eager execution runs
 * one op on a named device, synchronously: when dlrt_op_run returns, the outputs hold the
 * result. Every op is validated and shape-inferred by the core's op registry (docs/ops.md)
 * before a plugin sees it, with errors that name the op, the operand and what was expected.
 *
 * Kernels are cached per (physical device, complete op descriptor: op name, every operand's
 * dtype, dims and layout, every attribute value), so repeated calls with the same shapes and
 * attributes never re-create primitives; a kernel's workspace is allocated once with it. The
 * cache lives until dlrt_context_destroy.
 *
 * Threads: tensors may be created and destroyed from any thread; one tensor is written by one
 * thread at a time. dlrt_op_run calls of one context are serialised by a context-wide lock
 * (eager state is shared); dlrt_op_infer, dlrt_op_supported and dlrt_op_probe are
 * thread-safe and take no lock.
 */
typedef struct dlrt_tensor dlrt_tensor;

/* Allocate an uninitialised tensor on visible device `device_index`. `desc` must be dense
 * (DLRT_LAYOUT_DENSE), of a valid dtype, rank 0..DLRT_MAX_RANK, every dim >= 1; anything
 * else is INVALID_ARGUMENT. A device index out of range is OUT_OF_RANGE. Out of memory (the
 * plugin's, or over a logical device's memory limit) is RESOURCE_EXHAUSTED naming the device
 * and the request. The tensor is owned by the caller: free it with dlrt_tensor_destroy. */
DLRT_API dlrt_status* dlrt_tensor_create(dlrt_context* context, size_t device_index,
                                         const dlrt_tensor_desc* desc, dlrt_tensor** out_tensor);
/* Free the tensor's memory. NULL accepted. Tensors must be destroyed before their context. */
DLRT_API void dlrt_tensor_destroy(dlrt_tensor* tensor);
/* The tensor's descriptor, copied into *out as far as out->struct_size (set by the caller)
 * reaches. */
DLRT_API dlrt_status* dlrt_tensor_get_desc(const dlrt_tensor* tensor, dlrt_tensor_desc* out);
/* The visible device the tensor lives on (0 for NULL). */
DLRT_API size_t dlrt_tensor_device_index(const dlrt_tensor* tensor);
/* Bytes of its data: element size times the product of the dims (0 for NULL). */
DLRT_API size_t dlrt_tensor_byte_size(const dlrt_tensor* tensor);
/* Synchronous copies of the whole tensor from host memory `src` into it, and from it into
 * host memory `dst`. `bytes` must equal dlrt_tensor_byte_size (else INVALID_ARGUMENT). */
DLRT_API dlrt_status* dlrt_tensor_write(dlrt_tensor* tensor, const void* src, size_t bytes);
DLRT_API dlrt_status* dlrt_tensor_read(const dlrt_tensor* tensor, void* dst, size_t bytes);

/* Without a copy, for bindings (NumPy arrays in and out), where the device allows: a device
 * whose memory is the host's declares the attribute "host_memory" = 1 (plugin.h; the cpu and
 * reference plugins do, dlprobe shows it), and only there.
 *
 * dlrt_tensor_host_data: *out_data = the tensor's bytes in place (dlrt_tensor_byte_size of
 * them, dense row-major), valid until the tensor is destroyed; owned by the tensor. Reading
 * them while an op or run that writes the tensor is in flight is the caller's race.
 * FAILED_PRECONDITION naming the device when its memory is not the host's (use
 * dlrt_tensor_read there); *out_data is NULL then.
 *
 * dlrt_tensor_wrap_host: a tensor of `desc` (as dlrt_tensor_create checks it) on visible
 * device `device_index` over caller memory `data` (dense row-major, the desc's byte size,
 * aligned at least to the element size; 64 bytes is best for vector loads). Nothing is
 * allocated or copied; ops, feeds and fetches use `data` in place, so the caller keeps it
 * alive and unmoved until the tensor is destroyed, when release(release_arg) is called once
 * (release may be NULL). Destroy the tensor with dlrt_tensor_destroy as any other.
 * FAILED_PRECONDITION naming the device when its memory is not the host's; INVALID_ARGUMENT
 * for a NULL or misaligned `data`; OUT_OF_RANGE for a bad device index. On an error no tensor
 * is made and release is not called: the memory stays the caller's. */
DLRT_API dlrt_status* dlrt_tensor_host_data(const dlrt_tensor* tensor, void** out_data);
DLRT_API dlrt_status* dlrt_tensor_wrap_host(dlrt_context* context, size_t device_index,
                                            const dlrt_tensor_desc* desc, void* data,
                                            void (*release)(void* release_arg), void* release_arg,
                                            dlrt_tensor** out_tensor);

/* Infer the output descriptors of `op` for the given input descriptors (dense) and
 * attributes, without running anything. Attributes not given take their defaults.
 * `out_descs` has room for `max_outputs` descriptors, each with struct_size set by the
 * caller; *out_num_outputs is set to the op's output count, also when that exceeds
 * max_outputs (then INVALID_ARGUMENT and nothing is written: call again with more room).
 * Errors: NOT_FOUND for an unknown op; INVALID_ARGUMENT naming the op, the input, the axis or
 * the attribute and what was expected. `attrs` may be NULL when num_attrs is 0; likewise
 * `inputs`. */
DLRT_API dlrt_status* dlrt_op_infer(dlrt_context* context, const char* op,
                                    const dlrt_tensor_desc* const* inputs, size_t num_inputs,
                                    const dlrt_attr* const* attrs, size_t num_attrs,
                                    dlrt_tensor_desc* out_descs, size_t max_outputs,
                                    size_t* out_num_outputs);

/* Can device `device_index` run `op` for these inputs/attributes? NULL = yes. Otherwise the
 * validation error (NOT_FOUND / INVALID_ARGUMENT, as dlrt_op_infer), OUT_OF_RANGE for a bad
 * device index, or the plugin's answer (UNIMPLEMENTED: no kernel for this op, dtype, shape or
 * attribute) with its reason, prefixed "<op> on <device name>: ". Does not open the device. */
DLRT_API dlrt_status* dlrt_op_supported(dlrt_context* context, const char* op, size_t device_index,
                                        const dlrt_tensor_desc* const* inputs, size_t num_inputs,
                                        const dlrt_attr* const* attrs, size_t num_attrs);

/* Run `op` once on device `device_index` and wait for it. Every input must live on that
 * device (else INVALID_ARGUMENT naming the input and both devices). `num_outputs` must be the
 * op's output count. For each output slot: if outputs[i] is non-NULL, that tensor is written
 * in place; it must be on the same device and have exactly the inferred descriptor (else
 * INVALID_ARGUMENT naming the output, expected vs got), and it may be the same tensor as an
 * input only where docs/ops.md says the op updates in place (optimizer updates). If
 * outputs[i] is NULL, a new tensor is created and stored there, owned by the caller.
 * A device that cannot run the op answers as dlrt_op_supported does (UNIMPLEMENTED with its
 * reason); nothing falls back to another device. Random ops draw with an offset the context
 * advances on every run. On error, tensors created by this call are freed and their slots
 * left NULL; caller-provided outputs stay the caller's (their contents are then undefined). */
DLRT_API dlrt_status* dlrt_op_run(dlrt_context* context, const char* op, size_t device_index,
                                  const dlrt_tensor* const* inputs, size_t num_inputs,
                                  const dlrt_attr* const* attrs, size_t num_attrs,
                                  dlrt_tensor** outputs, size_t num_outputs);

/* The ops the core knows (docs/ops.md), sorted by name, for listings such as
 * `dlprobe --ops`. Needs no context. */
DLRT_API size_t dlrt_op_count(void);
/* Name and one-line doc of op `index` (static strings); NULL for an index out of range. */
DLRT_API const char* dlrt_op_name(size_t index);
DLRT_API const char* dlrt_op_doc(size_t index);

/* Ask device `device_index` whether it runs `op` on the op registry's example operands (f32
 * where the op takes floats, small shapes such as conv2d x (1,8,8,3), w (3,3,3,4); default
 * attributes but the required ones): what `dlprobe --ops` shows. NULL = yes; otherwise the
 * reason, as dlrt_op_supported gives it (NOT_FOUND for an unknown op). A yes here does not
 * promise every shape, dtype or attribute: ask dlrt_op_supported with the real operands. */
DLRT_API dlrt_status* dlrt_op_probe(dlrt_context* context, const char* op, size_t device_index);

/* ---- op signatures (for bindings that make one function per op) -------------------------
 *
 * What the op schema says about an op's operands and attributes, so that a language binding
 * (the Python package's `dlrt.raw_ops`) generates its functions, argument names and defaults
 * from the schema instead of listing them by hand. Every pointer is static: it lives as long
 * as the process and is owned by libdlrt. Needs no context. */
typedef struct dlrt_op_input_info {
  size_t struct_size;
  const char* name;  /* "x" */
  const char* shape; /* for docs: "(N,H,W,C)"; "" when any shape */
  int32_t variadic;  /* only the last input may be: it stands for min_count or more inputs */
  int32_t min_count; /* 1 unless variadic */
  int32_t differentiable; /* autodiff gives this input a gradient */
  /* Inputs with the same non-zero type_var must have one dtype (ONNX's "T"): a binding
   * converts a Python scalar to the dtype of the tensor it shares the letter with. */
  int32_t type_var;
  size_t num_dtypes;     /* the element types the input accepts */
  const int32_t* dtypes; /* dlrt_dtype values */
} dlrt_op_input_info;

typedef struct dlrt_op_attr_info {
  size_t struct_size;
  const char* name; /* "padding" */
  int32_t type;     /* dlrt_attr_type */
  int32_t required; /* 1: no default; default_value is NULL */
  const dlrt_attr* default_value; /* the value an omitted attribute takes */
  const char* doc;                /* "" when the schema has none */
  size_t num_allowed_strings;     /* a string attribute restricted to these values */
  const char* const* allowed_strings;
} dlrt_op_attr_info;

typedef struct dlrt_op_signature {
  size_t struct_size;
  const char* name;
  const char* doc; /* one line */
  size_t num_inputs;
  const dlrt_op_input_info* const* inputs;
  size_t num_outputs;
  const char* const* output_names;
  int32_t variadic_outputs; /* the last output stands for as many as the call makes (split) */
  int32_t uses_rng;         /* draws random numbers (a fresh draw on every run) */
  int32_t stateful;         /* writes state that outlives the run (optimizer updates) */
  int32_t differentiable;   /* autodiff has a gradient rule for it */
  size_t num_attrs;
  const dlrt_op_attr_info* const* attrs;
  const char* no_gradient_reason; /* "" when differentiable */
} dlrt_op_signature;

/* The signature of `op`, copied into *out as far as out->struct_size (set by the caller)
 * reaches. NOT_FOUND names an unknown op; INVALID_ARGUMENT for a NULL op or out. */
DLRT_API dlrt_status* dlrt_op_signature_get(const char* op, dlrt_op_signature* out);

/* ==========================================================================================
 * Graphs, variables, gradients, placement and executables.
 *
 * A dlrt_graph is a dataflow graph built op by op with shape inference at build time. Values
 * are named by dlrt_value handles (plain integers, valid for their graph). A graph also owns
 * its variables' storage: variables are placed and initialised on their device the first time
 * an executable that uses them is compiled, and every later executable of the same graph
 * shares them (a training step and an evaluation step see the same weights).
 *
 * An executable is a compiled subgraph: placed, partitioned per device, its buffers planned by
 * liveness and every kernel created once. Running it allocates nothing and creates nothing.
 *
 * Threads: a graph and its executables are used by one thread at a time.
 */
typedef struct dlrt_graph dlrt_graph;
typedef struct dlrt_executable dlrt_executable;
/* (node index << 32) | output index. DLRT_INVALID_VALUE is no value. */
typedef uint64_t dlrt_value;
#define DLRT_INVALID_VALUE ((dlrt_value)UINT64_MAX)

DLRT_API dlrt_status* dlrt_graph_create(dlrt_context* context, dlrt_graph** out_graph);
/* Frees the graph and its variables' storage. Executables of the graph must be destroyed
 * first; the graph must be destroyed before its context. NULL accepted. */
DLRT_API void dlrt_graph_destroy(dlrt_graph* graph);

/* Names: a node name is unique in its graph (ALREADY_EXISTS otherwise) and contains no ':'
 * (dlrt_graph_find reads "name:k" as output k). An empty name "" makes a unique one from the
 * op ("relu", "relu_1", ...; "placeholder", "constant", "variable" for the others).
 * Every builder leaves the graph unchanged when it fails, and sets *out_value to
 * DLRT_INVALID_VALUE on entry. Descriptors are dense (DLRT_LAYOUT_DENSE), every dim >= 1. */

/* A value fed at every run. */
DLRT_API dlrt_status* dlrt_graph_placeholder(dlrt_graph* graph, const char* name,
                                             const dlrt_tensor_desc* desc, dlrt_value* out_value);
/* A constant; `bytes` (== the desc's byte size) are copied from `data`. */
DLRT_API dlrt_status* dlrt_graph_constant(dlrt_graph* graph, const char* name,
                                          const dlrt_tensor_desc* desc, const void* data,
                                          size_t bytes, dlrt_value* out_value);
/* A variable, initialised by running `init_op` (an op of docs/ops.md with no inputs, e.g.
 * "fill" or "random_uniform"; its "shape" and "dtype" attributes are set from `desc`: giving
 * them with other values is INVALID_ARGUMENT) once on the variable's device. The init op and
 * its attributes are checked now (NOT_FOUND for an unknown op, INVALID_ARGUMENT for an op
 * with inputs or bad attributes). Random init ops draw with rng_offset 0, so a variable's
 * first value depends on its attributes only (seed included), on every device. `trainable`
 * marks it for dlrt_graph_trainable_variables. */
DLRT_API dlrt_status* dlrt_graph_variable(dlrt_graph* graph, const char* name,
                                          const dlrt_tensor_desc* desc, const char* init_op,
                                          const dlrt_attr* const* init_attrs, size_t num_init_attrs,
                                          int32_t trainable, dlrt_value* out_value);
/* Add one op (docs/ops.md). `name` may be NULL (a unique name is made: "conv2d_3"). Shape
 * inference runs now: errors name the op, the input index, the axis and what was expected
 * (NOT_FOUND for an unknown op). `outputs` has room for `max_outputs` values (fewer than the
 * op's outputs is INVALID_ARGUMENT, and nothing is added); *out_num_outputs is the op's
 * output count. */
DLRT_API dlrt_status* dlrt_graph_op(dlrt_graph* graph, const char* op, const char* name,
                                    const dlrt_value* inputs, size_t num_inputs,
                                    const dlrt_attr* const* attrs, size_t num_attrs,
                                    dlrt_value* outputs, size_t max_outputs,
                                    size_t* out_num_outputs);
/* After every run of an executable that includes it, variable `variable` holds `value`
 * (same dtype and dims, else INVALID_ARGUMENT). One assign per variable (ALREADY_EXISTS for
 * a second). Optimizer updates (sgd_update/adam_update) assigned to their own inputs run in
 * place. */
DLRT_API dlrt_status* dlrt_graph_assign(dlrt_graph* graph, dlrt_value variable, dlrt_value value);

/* Device scopes (TensorFlow's `with tf.device(...)`): ops, variables and constants created
 * while a scope is pushed request that device. `spec` uses the grammar of dlrt_device_spec
 * (INVALID_ARGUMENT when malformed); an empty string clears the request inside the scope.
 * Scopes nest and merge as TensorFlow's: the inner spec's parts override the outer's and the
 * parts it leaves out are inherited ("/job:localhost" then "/GPU:0" requests
 * "/job:localhost/device:GPU:0"); the device type and index go together. A partial spec
 * ("/GPU") leaves the index to placement. Popping with nothing pushed is FAILED_PRECONDITION. */
DLRT_API dlrt_status* dlrt_graph_push_device(dlrt_graph* graph, const char* spec);
DLRT_API dlrt_status* dlrt_graph_pop_device(dlrt_graph* graph);
/* Colocation hint: the nodes producing `a` and `b` are placed on the same device (groups
 * join: colocating a with b and b with c puts all three together). Variables are already
 * colocated with their assigns and with the optimizer updates that read them. */
DLRT_API dlrt_status* dlrt_graph_colocate(dlrt_graph* graph, dlrt_value a, dlrt_value b);
/* Whether `value` is computed from `on` along a path a gradient follows: through op inputs,
 * not through stop_gradient. *out_depends is 1 or 0. nn::TrainStep uses it to name a
 * variable its loss cannot reach (TensorFlow's "gradients do not exist" warning). */
DLRT_API dlrt_status* dlrt_graph_depends_on(const dlrt_graph* graph, dlrt_value value,
                                            dlrt_value on, int* out_depends);

/* Value queries. value_desc writes as far as out_desc->struct_size (set by the caller) reaches. */
DLRT_API dlrt_status* dlrt_graph_value_desc(const dlrt_graph* graph, dlrt_value value,
                                            dlrt_tensor_desc* out_desc);
/* The value of node `name`'s output 0 (or "name:k" for output k). NOT_FOUND otherwise. */
DLRT_API dlrt_status* dlrt_graph_find(const dlrt_graph* graph, const char* name,
                                      dlrt_value* out_value);

/* Gradients of scalar `loss` with respect to each of `wrt` (variables or any float values),
 * built as ops in the same graph by each op's gradient rule (nodes named
 * "gradients/<op node>/...", requesting the device of the op they differentiate). A value
 * `loss` does not depend on gets a zero gradient (a fill). An op without a gradient rule on
 * the path from `wrt` to `loss` (argmax, equal_count, gather_rows w.r.t. params, backward ops,
 * optimizer updates) is UNIMPLEMENTED naming it; a loss that is not a float scalar (rank 0 or
 * every dim 1), or an integer wrt, is INVALID_ARGUMENT. The graph is unchanged on failure.
 * `out_grads` has room for `num_wrt` values (each set to DLRT_INVALID_VALUE on entry). */
DLRT_API dlrt_status* dlrt_graph_gradients(dlrt_graph* graph, dlrt_value loss,
                                           const dlrt_value* wrt, size_t num_wrt,
                                           dlrt_value* out_grads);

/* Trainable variables in creation order: writes up to `max` values, returns the count
 * (0 for a NULL graph). */
DLRT_API size_t dlrt_graph_trainable_variables(const dlrt_graph* graph, dlrt_value* out_values,
                                               size_t max);
/* Read or overwrite a variable's current contents (host bytes == the desc's byte size). A
 * variable that was never placed is placed and initialised first (on its requested device,
 * NOT_FOUND when no device matches the request; else the first device, GPU before ACCEL
 * before CPU, whose plugin runs its init op). For checkpoints. */
DLRT_API dlrt_status* dlrt_graph_variable_read(dlrt_graph* graph, dlrt_value variable, void* dst,
                                               size_t bytes);
DLRT_API dlrt_status* dlrt_graph_variable_write(dlrt_graph* graph, dlrt_value variable,
                                                const void* src, size_t bytes);

/* ---- compiling and running ------------------------------------------------------------- */

typedef struct dlrt_compile_options {
  size_t struct_size;
  /* -1 (default): the context's setting (on unless the context says strict). 0 strict, 1 soft. */
  int32_t soft_placement;
  /* -1 (default): the context's setting / DLRT_LOG_DEVICE_PLACEMENT. 0 off, 1 print the
   * placement log to stderr when compiling. */
  int32_t log_device_placement;
  /* -1 (default): from the second run on, replay a captured step (CUDA Graphs) when the
   * executable runs on one device whose plugin captures (random ops included, from plugin
   * ABI 1.1; never while profiling). 0 never. 1 same as -1. */
  int32_t use_capture;
  /* Which assigns (dlrt_graph_assign) the executable applies, chosen by the caller:
   * 0 none: an evaluation or prediction step (reads variables, changes none, needs no
   *   placeholder that only the assigns read, such as labels);
   * 1 every assign of the graph, at the end of each run: a training step;
   * -1 (default): 0. Anything else is INVALID_ARGUMENT.
   * (This field was reserved0 before; callers that zeroed it get 0.) */
  int32_t run_assigns;
  /* 1: "auto" placement. Every op without a device request goes to one device chosen for the
   * executable: among the devices automatic placement may pick (never the reference plugin's
   * oracle devices unless named by a request or by visible_devices), the one whose plugin
   * runs the most of the executable's ops, ties by priority (GPU, ACCEL, CPU). Ops it cannot
   * run go by priority to devices that can. The choice and why is logged (a warning when a
   * higher-ranked device was passed over or a plugin was not loaded) and kept for
   * dlrt_executable_auto_device. 0 or -1 (default): each op by priority.
   * (Added after run_assigns: a caller whose struct_size ends before it gets the default.) */
  int32_t auto_device;
  /* The graph passes run between node selection and placement (docs/design.md, "Graph
   * passes"): NULL or "" (default): the context's DLRT_GRAPH_PASSES, else every pass. Or a
   * comma list read left to right: "default", "none", a pass name to turn it on, "-name" to
   * turn it off, e.g. "default,-fold_constants". The passes: fold_batch_norm,
   * fuse_bias_activation, fuse_residual_tail, fold_constants, remove_dead_nodes. An unknown
   * name is
   * INVALID_ARGUMENT listing them. The caller's graph is never changed; what the passes did is
   * dlrt_executable_pass_log. (Added after auto_device; copied during the call.) */
  const char* graph_passes;
} dlrt_compile_options;

/* Fill `options` with the defaults (including struct_size): every field -1. */
DLRT_API void dlrt_compile_options_init(dlrt_compile_options* options);

/* Compile the subgraph that computes `fetches` (and, with options->run_assigns 1, every
 * assign of the graph: their values and whatever those read), fed by `feeds` (placeholders;
 * every placeholder the subgraph needs must be fed, else INVALID_ARGUMENT naming it). Every
 * executable of a graph shares its variables: a training executable (run_assigns 1) and an
 * evaluation one (run_assigns 0) compiled from the same graph see the same weights.
 * Places every node (see docs/placement.md), places and initialises new variables, inserts
 * copies between devices, plans memory by liveness and creates every kernel. Strict
 * placement failures are INVALID_ARGUMENT naming the op, the requested device and the
 * devices that could run it. `options` may be NULL (defaults).
 * The executable must be destroyed before its graph. */
DLRT_API dlrt_status* dlrt_graph_compile(dlrt_graph* graph, const dlrt_value* feeds,
                                         size_t num_feeds, const dlrt_value* fetches,
                                         size_t num_fetches, const dlrt_compile_options* options,
                                         dlrt_executable** out_executable);
/* NULL accepted. */
DLRT_API void dlrt_executable_destroy(dlrt_executable* executable);

/* Run once. feeds[i] (any device; copied in when it is not where the placeholder was placed)
 * in the order given to compile; its desc must equal the placeholder's (INVALID_ARGUMENT
 * naming it otherwise). fetches[i]: non-NULL tensors are written (any device, desc must
 * match: then the run allocates nothing); NULL slots receive new tensors on the fetch's
 * device, owned by the caller. A fetched variable shows its value at the start of the run.
 * Returns when fetched values are ready and assigns are complete. */
DLRT_API dlrt_status* dlrt_executable_run(dlrt_executable* executable,
                                          const dlrt_tensor* const* feeds, size_t num_feeds,
                                          dlrt_tensor** fetches, size_t num_fetches);

/* Random ops (dropout, random_uniform, ...) draw with rng_offset = the number of runs so far
 * (docs/ops.md): run k of an executable draws the same numbers on every device and in every
 * process. Set the count the next run uses; later runs count up from it. A training loop
 * resumed from a checkpoint sets it to the steps already taken, so its dropout masks are
 * those of the uninterrupted run. */
DLRT_API dlrt_status* dlrt_executable_set_run_count(dlrt_executable* executable, uint64_t next_run);

/* Counters of one executable, for benchmarks and tests (ABI 1.1). */
typedef struct dlrt_run_stats {
  size_t struct_size;
  uint64_t kernels;          /* out: kernels created at compile = kernel launches of a run */
  uint64_t runs;             /* out: runs completed */
  uint64_t captured_replays; /* out: runs that launched a captured step (one launch each) */
  uint64_t run_allocations;  /* out: device blocks runs allocated (0 when fetches are given) */
} dlrt_run_stats;

/* Fill `out` (whose struct_size the caller set; fields past it are not written). */
DLRT_API dlrt_status* dlrt_executable_run_stats(const dlrt_executable* executable,
                                                dlrt_run_stats* out);

/* Profiling. While enabled (off by default), every run records, for each kernel, copy
 * between devices and assign copy, its host time from enqueue to the end of a
 * synchronisation of its stream: profiled runs synchronise after every node, which makes
 * durations real on asynchronous devices but serialises the devices and slows the run (and
 * never replays a captured step). Nothing is recorded (and nothing allocated) while off.
 * If the context's DLRT_TRACE_FILE is set, every executable profiles all its runs from
 * compile and writes its trace when destroyed: the first executable of the process to
 * the path itself, later ones to the path with ".1", ".2", ... inserted before the
 * extension; a failure to write is logged (warning), not returned. */
DLRT_API dlrt_status* dlrt_executable_set_profiling(dlrt_executable* executable, int32_t enabled);
/* Write what was recorded so far as Chrome trace-event JSON (open it in ui.perfetto.dev or
 * chrome://tracing): pid 1, one row (tid, named "<device> stream" by a thread_name metadata
 * event) per device stream, one complete event ("ph":"X") per node and run with name = node
 * name, cat = op ("copy", "assign"), ts/dur in microseconds, args {op, device, shapes, run}.
 * Never profiled: a valid file whose traceEvents array is empty. Written atomically (a
 * temporary file renamed over `path`); an error names `path` (NOT_FOUND when its folder
 * does not exist, PERMISSION_DENIED, else UNAVAILABLE). */
DLRT_API dlrt_status* dlrt_executable_write_trace(const dlrt_executable* executable,
                                                  const char* path);

/* Placement of every node of the executable, for users and tests. */
typedef struct dlrt_node_placement {
  size_t struct_size;
  const char* name;      /* node name */
  const char* op;        /* op name, or "placeholder" / "constant" / "variable" / "copy" */
  const char* requested; /* the device spec requested ("" = none) */
  const char* assigned;  /* full device name, "/job:localhost/replica:0/task:0/device:CPU:0" */
  const char* reason;    /* "explicit", "colocated", "default-priority", "follows-input",
                            "fallback:no-kernel", "fallback:device-missing", "inserted-copy",
                            "variable-placed" (kept from an earlier compile) */
  const char* detail;    /* human words for the reason, or "": e.g.
                            "requested /GPU:0 which cannot run it (...)" */
} dlrt_node_placement;

/* Placed nodes of the executable (graph nodes it runs plus inserted copies), in run order. */
DLRT_API size_t dlrt_executable_node_count(const dlrt_executable* executable);
/* OUT_OF_RANGE if index >= count; `out->struct_size` set by the caller. Strings are owned by
 * the executable and live until dlrt_executable_destroy. */
DLRT_API dlrt_status* dlrt_executable_node_placement(const dlrt_executable* executable,
                                                     size_t index, dlrt_node_placement* out);

typedef enum dlrt_dump_format {
  DLRT_DUMP_LOG = 0,  /* TensorFlow's placement log lines */
  DLRT_DUMP_JSON = 1, /* the placed graph as JSON */
  DLRT_DUMP_DOT = 2   /* Graphviz, one colour per device */
} dlrt_dump_format;

/* Write the dump into buf (NUL-terminated, truncated to buf_size) and its full length
 * (without the NUL) into *out_length; call with buf NULL to size it. */
DLRT_API dlrt_status* dlrt_executable_dump(const dlrt_executable* executable, int32_t format,
                                           char* buf, size_t buf_size, size_t* out_length);

/* With auto_device 1: what compile picked and why ("picked /device:CPU:0 (plugin cpu, class
 * CPU): it runs all 23 of the 23 op(s); passed over higher-ranked ..."); "" otherwise. Same
 * buffer convention as dlrt_executable_dump. */
/* What the graph passes changed, one line per change ("fuse_bias_activation: conv2d (conv2d) +
 * bias_add (bias_add) -> bias_add (conv2d_bias_act)"), joined by newlines; "" when they changed
 * nothing or were off. Same buffer convention as dlrt_executable_dump. The lines are also
 * printed before the placement log when it is on and DLRT_LOG_LEVEL is info or debug. */
DLRT_API dlrt_status* dlrt_executable_pass_log(const dlrt_executable* executable, char* buf,
                                               size_t buf_size, size_t* out_length);

DLRT_API dlrt_status* dlrt_executable_auto_device(const dlrt_executable* executable, char* buf,
                                                  size_t buf_size, size_t* out_length);

/* ---- device memory --------------------------------------------------------------------- */

typedef struct dlrt_memory_stats {
  size_t struct_size;
  uint64_t in_use;     /* bytes held by live tensors, buffers and kernels' workspaces */
  uint64_t peak;       /* highest in_use so far */
  uint64_t reserved;   /* bytes taken from the plugin (>= in_use) */
  uint64_t limit;      /* 0 = none */
  uint64_t num_allocs; /* calls into the plugin's mem_alloc so far */
} dlrt_memory_stats;

/* The memory arena of registry (logical) device `device_index`: every byte the context took
 * on it (tensors, variables, executables' buffers and workspaces). in_use counts the bytes
 * asked for; reserved what the arena holds from the plugin (blocks are rounded up to 256
 * bytes; with growth on, freed blocks are kept for reuse up to 64 MiB; with growth off, the
 * whole reservation). Written as far as out->struct_size (set by the caller) reaches.
 * OUT_OF_RANGE for a bad index. Thread-safe. */
DLRT_API dlrt_status* dlrt_context_memory_stats(dlrt_context* context, size_t device_index,
                                                dlrt_memory_stats* out);

/* ==========================================================================================
 * Data files and checkpoints.
 *
 * IDX (the files of MNIST and Fashion-MNIST): a 4-byte magic 0x0000TTRR (TT the element
 * type: 0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32, 0x0D f32, 0x0E f64), RR
 * big-endian u32 dims, then the elements row-major, big-endian. A file starting with the
 * gzip magic 1f 8b is decompressed as it is read.
 *
 * safetensors (Hugging Face's checkpoint format): an 8-byte little-endian header length N, N
 * bytes of JSON {"__metadata__": {string: string}, "<name>": {"dtype": "F32", "shape": [..],
 * "data_offsets": [begin, end]}, ...}, then the tensors' little-endian bytes. dtype names:
 * F32, F16, BF16, F64, I32, I64, U8, I8, U16, I16, U32, U64, BOOL. Other dtypes of the format
 * (F8_*, F6_*, F4, C64) are UNIMPLEMENTED naming the dtype.
 *
 * Readers are strict: a malformed file is DATA_LOSS (or UNIMPLEMENTED, above) with a message
 * naming the path, the field or tensor, what it holds and what was expected; a missing file
 * is NOT_FOUND naming the path. Nothing here needs a context; every function is thread-safe
 * on distinct objects.
 */

/* One IDX array, in host byte order. */
typedef struct dlrt_idx_array {
  size_t struct_size;          /* set by the caller (DLRT_STRUCT_SIZE) */
  int32_t dtype;               /* out: dlrt_dtype: U8, I8, I16, I32, F32 or F64 */
  int32_t rank;                /* out: 1..DLRT_MAX_RANK */
  int64_t dims[DLRT_MAX_RANK]; /* out: dims[0..rank); each 0..2^32-1 */
  void* data;                  /* out: `bytes` bytes, row-major, malloc-aligned; owned by the
                                  library until dlrt_idx_free (never NULL after a success) */
  size_t bytes;                /* out: element size × product of dims */
} dlrt_idx_array;

/* Read the IDX file at `path` into *out (struct_size set by the caller; every other field is
 * cleared on entry). DATA_LOSS names what is wrong: "bad IDX magic 0x..., expected
 * 0x0000TTRR", rank 0, dims whose product overflows, "header says 60000×28×28 = 47040000
 * bytes of data, file has 47039990 ...", trailing bytes, a truncated or corrupt gzip stream.
 * UNIMPLEMENTED for rank > DLRT_MAX_RANK. A gzipped file is decompressed into a
 * buffer that grows only as data arrives and never past the size the header states. */
DLRT_API dlrt_status* dlrt_idx_read(const char* path, dlrt_idx_array* out);
/* The most bytes one IDX read allocates for its data: a header (after max_rows) claiming more
 * is RESOURCE_EXHAUSTED naming the size and this limit, before anything is allocated. */
#define DLRT_IDX_MAX_BYTES (UINT64_C(4) << 30)
/* dlrt_idx_read limited to the first `max_rows` rows along dims[0] (0: all): only those are
 * read and allocated, and out->dims[0] is min(dims[0], max_rows). A plain file's total size
 * is still checked against its header; the unread tail of a gzipped file is not. A FIFO,
 * folder or device is INVALID_ARGUMENT naming the path (it is never read from). */
DLRT_API dlrt_status* dlrt_idx_read_rows(const char* path, uint64_t max_rows, dlrt_idx_array* out);
/* Free out->data and clear data/bytes. NULL and an already-freed array are accepted. */
DLRT_API void dlrt_idx_free(dlrt_idx_array* array);

/* Write an 8-bit PNG image (libpng) to `path`: `pixels` holds height x width x channels bytes,
 * row-major, rows top first; channels 1 = gray, 2 = gray+alpha, 3 = RGB, 4 = RGBA. The file
 * is written atomically (a temp file in the same folder, fsync'd and renamed): on any error an
 * existing file at `path` is left as it was. INVALID_ARGUMENT names the bad argument: a side
 * outside 1..65536, channels outside 1..4, num_bytes != height*width*channels, NULL pixels;
 * NOT_FOUND when the folder does not exist; the errno's code when writing fails.
 * Thread-safe. */
DLRT_API dlrt_status* dlrt_png_write(const char* path, const uint8_t* pixels, size_t num_bytes,
                                     int64_t height, int64_t width, int32_t channels);

/* An opened safetensors file: header validated and every tensor's bytes read into memory. */
typedef struct dlrt_safetensors dlrt_safetensors;

/* One tensor of a safetensors file (read), or one to write. */
typedef struct dlrt_safetensors_entry {
  size_t struct_size;          /* set by the caller (DLRT_STRUCT_SIZE) */
  const char* name;            /* read: owned by the handle, lives until close */
  int32_t dtype;               /* dlrt_dtype */
  int32_t rank;                /* 0..DLRT_MAX_RANK */
  int64_t dims[DLRT_MAX_RANK]; /* dims[0..rank), each >= 0 */
  const void* data;            /* read: owned by the handle, lives until close; aligned to
                                  16 bytes plus the tensor's offset in the data section */
  size_t bytes;                /* element size × product of dims */
} dlrt_safetensors_entry;

/* Open and validate the whole file: header length (not past the file, at most 100000000),
 * header JSON (an object), each tensor's dtype, shape (a list of non-negative integers whose
 * product does not overflow), data_offsets ([begin, end], begin <= end, end - begin == the
 * shape's byte size), offsets contiguous from 0 without gap or overlap, no data past the end,
 * no trailing bytes after the last tensor, no duplicate names, __metadata__ a string→string
 * map. Each problem is its own DATA_LOSS message naming the tensor and the field. The handle
 * is the caller's: free it with dlrt_safetensors_close. */
DLRT_API dlrt_status* dlrt_safetensors_open(const char* path, dlrt_safetensors** out_handle);
/* NULL accepted. */
DLRT_API void dlrt_safetensors_close(dlrt_safetensors* handle);
/* Number of tensors (0 for NULL). Tensors are indexed in the order of their data in the file
 * (for files this library wrote: the order they were written). */
DLRT_API size_t dlrt_safetensors_count(const dlrt_safetensors* handle);
/* Tensor `index` into *out, as far as out->struct_size (set by the caller) reaches.
 * OUT_OF_RANGE if index >= count. */
DLRT_API dlrt_status* dlrt_safetensors_get(const dlrt_safetensors* handle, size_t index,
                                           dlrt_safetensors_entry* out);
/* The index of tensor `name`; NOT_FOUND naming it otherwise. */
DLRT_API dlrt_status* dlrt_safetensors_find(const dlrt_safetensors* handle, const char* name,
                                            size_t* out_index);
/* The __metadata__ value of `key`, or NULL when absent. Owned by the handle. */
DLRT_API const char* dlrt_safetensors_metadata(const dlrt_safetensors* handle, const char* key);
/* The metadata entries in header order: count, and key `index` (NULL when out of range). */
DLRT_API size_t dlrt_safetensors_metadata_count(const dlrt_safetensors* handle);
DLRT_API const char* dlrt_safetensors_metadata_key(const dlrt_safetensors* handle, size_t index);

/* Write a safetensors file: entries[i] (name, dtype, rank, dims, data, bytes; caller-owned,
 * only read) in this order with contiguous offsets from 0, and metadata pairs
 * meta_keys[i] = meta_values[i] (no "__metadata__" when num_meta is 0). The header is compact
 * JSON padded with spaces to a multiple of 8 bytes, as the reference implementation writes
 * it, so the same tensors give the same bytes. Everything is validated first
 * (INVALID_ARGUMENT naming the entry: duplicate or reserved name, bad dtype or dims, bytes !=
 * element size × product of dims, NULL data; duplicate metadata keys; strings not UTF-8).
 * Written atomically: a temp file in the same folder, fsynced, renamed over `path`, then the
 * folder fsynced; on any failure `path` is untouched and the temp file removed. A folder as
 * `path` is INVALID_ARGUMENT; a missing folder NOT_FOUND. */
DLRT_API dlrt_status* dlrt_safetensors_write(const char* path,
                                             const dlrt_safetensors_entry* const* entries,
                                             size_t num_entries, const char* const* meta_keys,
                                             const char* const* meta_values, size_t num_meta);

/* ==========================================================================================
 * Distribution: data parallel over several devices and several processes (docs/design.md
 * section 7).
 *
 * A strategy is this process's share of a data-parallel group: its local replicas (one per
 * device) and, in a multi-worker job started by mpirun, its rank among the workers. Every
 * replica of every worker runs the same step on its slice of the global batch; the strategy
 * sums their gradients (all-reduce) so that each applies the same update and the weights stay
 * identical everywhere.
 *
 * How the sum travels (chosen once, when the strategy is made):
 * - Devices whose plugin offers collectives (NCCL on CUDA; the reference plugin's in-process
 *   double): one communicator per local device, over every device of every worker (rank 0
 *   makes the id and broadcasts it over MPI); the tensors are packed into one flat device
 *   buffer per replica (taken from the device's memory once, kept) and reduced in one call.
 *   This needs every replica on one plugin and on its own physical device.
 * - Otherwise (CPU logical devices, a mix of devices, logical splits of one GPU): a reduction
 *   on the host, in replica order, in f32; then, between workers, MPI through the "mpi" plugin
 *   (libdlrt-mpi.so), which folds the workers' sums in rank order.
 * Every replica of every worker ends with the same bits.
 *
 * Workers: rank, size and local rank come from OpenMPI's environment (OMPI_COMM_WORLD_RANK,
 * OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK), else torchrun's (RANK, WORLD_SIZE,
 * LOCAL_RANK), else Slurm's (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID), else TensorFlow's
 * TF_CONFIG (JSON; the chief is worker 0), else the process is worker 0 of 1. TF_CONFIG beside
 * a launcher's variables must agree with them (INVALID_ARGUMENT naming both otherwise). The
 * MPI transport checks them against MPI's own view (INVALID_ARGUMENT when they disagree):
 * workers always talk over MPI, so they are started by mpirun (or srun with MPI support).
 * dlrt_worker_info says what a strategy made now would join.
 *
 * Timeouts: a collective that has not completed after the timeout (options->timeout_ms, else
 * DLRT_COLLECTIVE_TIMEOUT in seconds, else 300 s) fails with DEADLINE_EXCEEDED naming the
 * rank(s) it was waiting for; a peer that the transport sees fail gives UNAVAILABLE naming
 * it. After such an error (or any other failure once a collective has started) the strategy
 * is broken: its communicators are aborted (never waited for) and every later call returns
 * FAILED_PRECONDITION repeating the first error; make a new strategy on every worker. An
 * INVALID_ARGUMENT about the caller's tensors is reported before anything is sent and breaks
 * nothing.
 *
 * Threads: one thread at a time per strategy (calls are serialised). The tensors must be
 * ready when a call is made (every dlrt call that wrote them has returned).
 */
typedef struct dlrt_strategy dlrt_strategy;

/* This process's place in a multi-worker job, read from the environment as
 * dlrt_strategy_create reads it (above). `source` names the variables it came from
 * ("OMPI_COMM_WORLD_*", "RANK/WORLD_SIZE", "SLURM_PROCID/NTASKS", "TF_CONFIG"; "" for the
 * default, worker 0 of 1), a static string. INVALID_ARGUMENT as dlrt_strategy_create's. */
typedef struct dlrt_worker_info {
  size_t struct_size;
  int32_t rank;
  int32_t size;
  int32_t local_rank;
  int32_t reserved0;
  const char* source;
} dlrt_worker_info;
DLRT_API dlrt_status* dlrt_worker_info_get(dlrt_worker_info* out);

typedef struct dlrt_strategy_options {
  size_t struct_size;
  /* Local replica devices, as device specs ("/GPU:0", "/device:CPU:1", "CPU:2"); one replica
   * per entry, no device twice. NULL or 0 entries: every GPU-class device of the context,
   * else every device of type CPU (the CPU backend's logical devices), else every CPU-class
   * device such as REF (DLRT_VISIBLE_DEVICES and logical device configs apply). */
  const char* const* devices;
  size_t num_devices;
  /* 0: this process only (MirroredStrategy): the worker environment is not read, and the
   * strategy is worker 0 of 1. 1: every worker of the job (MultiWorkerMirroredStrategy);
   * with one worker it is the same as 0. */
  int32_t multi_worker;
  int32_t reserved0;
  /* > 0: the collective timeout in milliseconds; 0: DLRT_COLLECTIVE_TIMEOUT or 300 s. */
  int64_t timeout_ms;
} dlrt_strategy_options;

/* Fill `options` with the defaults (including struct_size): no devices listed, single
 * process, timeout 0. */
DLRT_API void dlrt_strategy_options_init(dlrt_strategy_options* options);

/* Make the strategy: resolve the devices (INVALID_ARGUMENT naming a spec that matches no
 * device, or a device given twice; NOT_FOUND when the default finds no device), read the
 * worker environment (INVALID_ARGUMENT naming a variable that is not a valid rank or size),
 * and join the other workers (blocks until every worker has joined, or the timeout). A
 * multi-worker job without the mpi plugin is FAILED_PRECONDITION saying so (and why it did
 * not load). `options` NULL: the defaults. The strategy must be destroyed before its
 * context. */
DLRT_API dlrt_status* dlrt_strategy_create(dlrt_context* context,
                                           const dlrt_strategy_options* options,
                                           dlrt_strategy** out_strategy);
/* NULL accepted. A healthy strategy releases its communicators; a broken one aborts them. */
DLRT_API void dlrt_strategy_destroy(dlrt_strategy* strategy);

/* Local replicas, in the order given (default: registry order). */
DLRT_API size_t dlrt_strategy_num_replicas(const dlrt_strategy* strategy);
/* The registry index (as dlrt_context_device_info takes it) of local replica `replica`;
 * OUT_OF_RANGE past the count. */
DLRT_API dlrt_status* dlrt_strategy_replica_device(const dlrt_strategy* strategy, size_t replica,
                                                   size_t* out_device_index);
/* This worker's rank, the number of workers and the rank among this host's workers
 * (0, 1 and 0 in a single process). These and dlrt_strategy_num_replicas answer 0 for a
 * NULL strategy. */
DLRT_API int32_t dlrt_strategy_rank(const dlrt_strategy* strategy);
DLRT_API int32_t dlrt_strategy_num_workers(const dlrt_strategy* strategy);
DLRT_API int32_t dlrt_strategy_local_rank(const dlrt_strategy* strategy);

/* Sum in place over every replica of every worker. `tensors` holds num_replicas groups of
 * `per_replica` tensors, replica-major: tensors[r * per_replica + k] is tensor k of replica
 * r, on replica r's device. Every group has the same dtypes (F32) and element counts, in the
 * same order; every worker calls with the same layout (INVALID_ARGUMENT names the first
 * tensor that breaks these rules; the workers compare layouts the first time each one is
 * used, and all fail alike when they differ). per_replica >= 1. Returns when every tensor
 * holds the sum. */
DLRT_API dlrt_status* dlrt_strategy_all_reduce(dlrt_strategy* strategy, dlrt_tensor* const* tensors,
                                               size_t per_replica);
/* Copy replica 0 of worker 0's tensors into every other replica's (same layout as
 * all_reduce; any dtype): initial weights and restored state start identical everywhere. */
DLRT_API dlrt_status* dlrt_strategy_broadcast(dlrt_strategy* strategy, dlrt_tensor* const* tensors,
                                              size_t per_replica);

/* ---- ONNX inference sessions (docs/onnx.md) -------------------------------------------- */

/* A model read from an ONNX file (opsets 7-23 of the default domain), checked, and imported
 * into dlrt graphs: one graph and executable per set of input shapes, so a model with a
 * symbolic batch dim "N" runs batch 1 and batch 64 from one session. At most
 * max_cached_shapes compiled shapes are kept (least recently used dropped). */
typedef struct dlrt_session dlrt_session;

typedef struct dlrt_session_options {
  size_t struct_size;
  /* NULL, "" or "auto" (default): "auto" placement (dlrt_compile_options.auto_device);
   * else a device spec ("/GPU:0", "CPU:0") every op requests, as a device scope would. */
  const char* device;
  int32_t soft_placement;       /* -1 (default): the context's; 0 strict; 1 soft */
  int32_t log_device_placement; /* -1 (default): the context's; 1 print the log at compile */
  int32_t max_cached_shapes;    /* <= 0 (default): 8 */
  /* 1 or -1 (default): convolutions with constant weights run in NHWC, and the compile's
   * graph passes fold batch norms into them and fuse biases and activations
   * (dlrt_compile_options.graph_passes). 0: each node as it is, no graph passes. */
  int32_t optimize;
} dlrt_session_options;

DLRT_API void dlrt_session_options_init(dlrt_session_options* options);

/* From a file (external data is read relative to its folder, never outside it) or from bytes
 * (no external data). The model is imported once at creation (symbolic dims taken as 1), so
 * an op without a converter or a bad node fails here: UNIMPLEMENTED / INVALID_ARGUMENT naming
 * the node. `options` may be NULL. */
DLRT_API dlrt_status* dlrt_session_create_from_onnx(dlrt_context* context, const char* path,
                                                    const dlrt_session_options* options,
                                                    dlrt_session** out_session);
DLRT_API dlrt_status* dlrt_session_create_from_onnx_bytes(dlrt_context* context, const void* data,
                                                          size_t size,
                                                          const dlrt_session_options* options,
                                                          dlrt_session** out_session);
/* NULL accepted. Destroy before the context. */
DLRT_API void dlrt_session_destroy(dlrt_session* session);

/* A model input or output: its ONNX name, dtype, rank and dims, -1 for a symbolic dim, whose
 * name is dim_names[i] ("" for fixed dims). has_shape 0: the model gives no shape. Strings
 * live as long as the session. */
typedef struct dlrt_session_io {
  size_t struct_size;
  const char* name;
  int32_t dtype;
  int32_t rank;
  int64_t dims[DLRT_MAX_RANK];
  const char* dim_names[DLRT_MAX_RANK];
  int32_t has_shape;
} dlrt_session_io;

DLRT_API size_t dlrt_session_input_count(const dlrt_session* session);
DLRT_API size_t dlrt_session_output_count(const dlrt_session* session);
/* OUT_OF_RANGE past the count; out->struct_size set by the caller. */
DLRT_API dlrt_status* dlrt_session_input(const dlrt_session* session, size_t index,
                                         dlrt_session_io* out);
DLRT_API dlrt_status* dlrt_session_output(const dlrt_session* session, size_t index,
                                          dlrt_session_io* out);

/* Run once: inputs[i] for model input i (any device; dtype as the model says, dims its fixed
 * dims and any size >= 1 for symbolic ones: INVALID_ARGUMENT naming the input otherwise).
 * outputs[k]: NULL slots receive new tensors (owned by the caller); a non-NULL one is written
 * (its desc must match). A new set of input shapes imports and compiles first. */
DLRT_API dlrt_status* dlrt_session_run(dlrt_session* session, const dlrt_tensor* const* inputs,
                                       size_t num_inputs, dlrt_tensor** outputs, size_t num_outputs);

/* The executable of the most recent run (or of creation), for dlrt_executable_dump /
 * node_placement / run_stats / set_profiling; owned by the session, valid until its shapes
 * drop out of the cache (max_cached_shapes other shapes run since) or the session is
 * destroyed. */
DLRT_API dlrt_executable* dlrt_session_executable(dlrt_session* session);

/* Write the subgraph that computes `outputs` from `inputs` (placeholders) as an ONNX model
 * (opset 17) at `path`: variables with their current values and constants as initializers,
 * the ONNX graph's inputs and outputs named by input_names / output_names. symbolic_batch 1:
 * dim 0 of every input and output is the symbol "N". UNIMPLEMENTED names the first node whose
 * dlrt op has no ONNX form yet (docs/onnx.md lists those that have); nothing is written then.
 * nn::Model::save_onnx calls this. */
DLRT_API dlrt_status* dlrt_graph_export_onnx(dlrt_graph* graph, const dlrt_value* inputs,
                                             const char* const* input_names, size_t num_inputs,
                                             const dlrt_value* outputs,
                                             const char* const* output_names, size_t num_outputs,
                                             int32_t symbolic_batch, const char* path);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLRT_DLRT_H_ */
