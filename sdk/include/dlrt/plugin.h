/* dlrt/plugin.h: the plugin C ABI. A device backend is a shared library that exports exactly
 * one symbol, `dlrt_plugin_init`, and fills the function table below.
 *
 * This header is all a backend compiles against; a plugin never links libdlrt. It is C99 and
 * includes no C++ header.
 *
 * ---- Versioning ---------------------------------------------------------------------------
 * DLRT_ABI_MAJOR changes only when a shipped struct or function changes meaning or layout;
 * the host refuses a plugin of another major. DLRT_ABI_MINOR grows when fields or functions
 * are appended: a plugin built against minor m works with any host of the same major whose
 * floor (DLRT_ABI_MINOR_FLOOR) is <= m, newer or older than the plugin:
 *   - every struct starts with `size_t struct_size` (the size its writer was compiled with)
 *     and only grows at its end;
 *   - a reader never reads past the struct_size it is given; a field that lies past it is
 *     treated as absent (NULL / zero);
 *   - a writer writes at most min(its size, the size the reader asked for) bytes;
 *   - a NULL optional entry means "absent", and the host then behaves as the entry's comment
 *     says. Required entries are checked when the plugin is loaded and never become optional
 *     or required later within one major.
 * Each minor bump is one line in sdk/CHANGELOG.md; tests/abi pins the layout of every
 * shipped minor with static_asserts.
 *
 * ---- Errors -------------------------------------------------------------------------------
 * Every fallible entry returns `dlrt_status*`: NULL is OK; otherwise a status the plugin made
 * with host->status_create and the host will free. No exception, abort or exit crosses the
 * boundary: plugins written in C++ wrap every entry in try/catch.
 * Out-parameters come last; a plugin sets them to NULL/0 on entry and, when a create fails,
 * releases whatever it built before returning the error.
 *
 * ---- Threads ------------------------------------------------------------------------------
 * Unless an entry says otherwise: description and query entries (devices, supports_op) are
 * thread-safe; memory allocation/free is thread-safe; work on one stream is externally
 * synchronised (one thread at a time per stream); a kernel is externally synchronised (it may
 * own scratch state), different kernels may run concurrently on different streams.
 *
 * ---- Lifetimes ----------------------------------------------------------------------------
 * plugin  (plugin_create .. plugin_destroy)
 *   device  (device_open .. device_close; the host closes every device before plugin_destroy)
 *     memory, streams, events, kernels, communicators, captured graphs: destroyed by the
 *     host before their device is closed.
 */
#ifndef DLRT_PLUGIN_H_
#define DLRT_PLUGIN_H_

#include "dlrt/status.h"
#include "dlrt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DLRT_ABI_MAJOR 1
#define DLRT_ABI_MINOR 4
/* The oldest minor this host still accepts. */
#define DLRT_ABI_MINOR_FLOOR 0

/* The one symbol a plugin exports, and the name the loader looks up. */
#define DLRT_PLUGIN_INIT_SYMBOL "dlrt_plugin_init"
#if defined(_WIN32) /* DLRT_PLUGIN_EXPORT marks that symbol; a DLL exports only dllexport */
#define DLRT_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__) /* build plugins with -fvisibility=hidden */
#define DLRT_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define DLRT_PLUGIN_EXPORT
#endif

/* Opaque handles, each defined by the plugin. */
typedef struct dlrt_plugin dlrt_plugin; /* one initialised plugin instance */
typedef struct dlrt_device dlrt_device; /* an opened device */
typedef struct dlrt_stream dlrt_stream; /* an in-order work queue on a device */
typedef struct dlrt_event dlrt_event;   /* a marker recorded on a stream */
typedef struct dlrt_kernel dlrt_kernel; /* a prepared op (primitive, plan, workspace size) */
typedef struct dlrt_graph_exec dlrt_graph_exec; /* a captured, replayable sequence of stream work */
typedef struct dlrt_comm dlrt_comm;             /* a collective communicator (one rank) */

/* ==========================================================================================
 * Services the host hands to the plugin. Owned by the host; valid from dlrt_plugin_init until
 * plugin_destroy returns. All entries are thread-safe.
 */
typedef struct dlrt_host_api {
  size_t struct_size;
  uint32_t abi_major; /* the host's DLRT_ABI_MAJOR */
  uint32_t abi_minor; /* the host's DLRT_ABI_MINOR */
  /* Make an error to return; `message` is copied. Returns NULL for DLRT_OK. */
  dlrt_status* (*status_create)(dlrt_code code, const char* message);
  /* Free a status the plugin decided not to return (e.g. after a cleanup that also failed). */
  void (*status_free)(dlrt_status* status);
  /* Log through the host's logger (honours DLRT_LOG_LEVEL). `plugin` is the plugin's name. */
  void (*log)(int32_t level, const char* plugin, const char* message);
} dlrt_host_api;

/* ==========================================================================================
 * Description of one device, filled by device_get_desc without opening the device.
 * Every pointer is owned by the plugin and lives until plugin_destroy. Unknown numbers are 0,
 * unknown strings "".
 */
typedef struct dlrt_device_desc {
  size_t struct_size;
  int32_t device_class;   /* out: dlrt_device_class */
  int32_t ordinal;        /* out: index within this plugin, 0.. */
  const char* type;       /* out: device type used in names: "CPU", "GPU", "REF" -> /device:GPU:0 */
  const char* name;       /* out: model name, e.g. "NVIDIA H200", "AMD EPYC 7B13" */
  const char* vendor;     /* out */
  const char* pci_bus_id; /* out: "0000:3b:00.0" */
  const char* uuid;       /* out: "GPU-8c5e..." */
  int32_t compute_capability_major; /* out: CUDA only */
  int32_t compute_capability_minor; /* out */
  int32_t core_count;               /* out: CPU cores, or GPU multiprocessors */
  int32_t reserved0;
  uint64_t memory_total;      /* out: bytes */
  const char* driver_version; /* out: e.g. "CUDA driver 13.0" */
  const char*
      library_versions; /* out: e.g. "oneDNN 3.0.0" or "cuDNN 9.1, cuBLAS 13.0, NCCL 2.27" */
  /* Cost hints, advisory: shown by dlprobe, not read by placement (docs/design.md
   * section 2). 0 when unknown. */
  double peak_gflops;           /* out: f32 */
  double memory_bandwidth_gbps; /* out */
  double launch_overhead_us;    /* out: cost of one kernel launch */
  /* Further typed properties ("isa", "l2_cache_bytes", ...). Device attributes the host
   * reads (any other is shown, not read):
   *   "oracle" (bool or int, non-zero): the device is a numerical reference, slow by design
   *   (this repository's reference plugin); automatic placement never picks it unless the
   *   user names it. Absent reads as 0.
   *   "host_memory" (bool or int, 1): the device's buffers are ordinary memory of the host
   *   process, and its kernels and copies accept any host pointer aligned to the element
   *   size, not only what mem_alloc returned. The host then reads tensors in place and wraps
   *   caller memory as tensors (dlrt.h: dlrt_tensor_host_data, dlrt_tensor_wrap_host). Absent
   *   reads as 0 (a GPU, or a plugin that checks its pointers, as the reference oracle). */
  size_t num_attrs;              /* out */
  const dlrt_attr* const* attrs; /* out: num_attrs pointers */
} dlrt_device_desc;

/* Arguments of plugin_create. Owned by the host, valid during the call only. */
typedef struct dlrt_plugin_create_args {
  size_t struct_size;
  const dlrt_host_api* host;
  /* Plugin options as string attributes (type DLRT_ATTR_STRING), from the context options
   * "<plugin name>:<key>=<value>". Unknown keys are an INVALID_ARGUMENT naming the key. */
  size_t num_options;
  const dlrt_attr* const* options;
} dlrt_plugin_create_args;

/* Cost estimate for one op on one device, filled by op_supported. 0 = unknown. Advisory:
 * the core passes NULL today (docs/design.md section 2). */
typedef struct dlrt_op_cost {
  size_t struct_size;
  double estimated_us; /* out */
  double flops;        /* out */
  double bytes;        /* out: memory traffic */
} dlrt_op_cost;

/* One op instance: name, operand descriptions and attributes. Owned by the caller, valid for
 * the call only: kernel_create copies what the kernel keeps. Op names and attribute names are
 * the core's op registry's (core/ops); fused ops such as "conv2d_bias_act" are ordinary names.
 * The core has already checked the operands and attributes against the op's schema: outputs
 * are inferred, every attribute is present (defaults filled in) and derived attributes are
 * spelled out (conv and pool ops carry "pads", the padding SAME/VALID/EXPLICIT amounts to),
 * so a plugin checks only what it can run (dtypes, layouts, attribute limits). */
typedef struct dlrt_op_desc {
  size_t struct_size;
  const char* op;
  size_t num_inputs;
  const dlrt_tensor_desc* const* inputs;
  size_t num_outputs;
  const dlrt_tensor_desc* const* outputs;
  size_t num_attrs;
  const dlrt_attr* const* attrs;
  /* ABI 1.2: the version of the op's meaning (docs/ops.md, "Op versions"); 1 for every op
   * shipped so far. It grows when an op's arithmetic or attributes change meaning: a plugin
   * that implements an older version declines the op (UNIMPLEMENTED, naming both versions)
   * rather than computing the old meaning. Absent (struct_size too small): version 1. */
  int32_t op_version;
  int32_t reserved0; /* zero */
  /* ABI 1.3: bit i set (i < 64) says input i holds the same bytes on every run of the kernels
   * made from this descriptor (a graph constant: an ONNX initializer, a folded weight), so a
   * kernel may prepare from it once and keep the result, e.g. a filter reordered into the
   * layout its primitive wants. The host sets it only for buffers it fills once at compile
   * and never writes again; kernels of the same descriptor without the bit never share such
   * state with those that have it (the host keys its kernel caches by the whole descriptor).
   * Absent (struct_size too small, a pre-1.3 host) or 0: every input may change between
   * runs. A plugin may ignore it. */
  uint64_t constant_inputs;
} dlrt_op_desc;

/* Operands of one kernel_run. Buffers are device pointers from mem_alloc (or offsets into
 * them), in the order of the op descriptor; owned by the host, which keeps them alive until
 * the work on the stream has completed. The struct itself is the caller's and valid during
 * the call only: a plugin that defers the work (a stream thread, a captured graph) copies
 * the fields it needs. */
typedef struct dlrt_kernel_args {
  size_t struct_size;
  size_t num_inputs;
  const void* const* inputs;
  size_t num_outputs;
  void* const* outputs;
  void* workspace; /* at least the workspace_bytes kernel_create asked for; may be NULL if 0 */
  size_t workspace_bytes;
  /* Counter the executor advances on every run; random ops mix it with their "seed"
   * attribute so every step draws fresh numbers and a run is reproducible. */
  uint64_t rng_offset;
  /* ---- ABI 1.1 ---- */
  /* NULL: use rng_offset. Otherwise device memory of the kernel's device holding the offset
   * (8 bytes, 8-aligned), which random ops read when the kernel *executes*, not when it is
   * enqueued: a captured graph freezes its launch arguments, so the host writes each run's
   * offset there (a copy enqueued on the same stream before the kernels or the replay) and
   * every replay draws fresh numbers. For work that is not replayed it holds rng_offset.
   * Owned by the host, alive as long as the kernel and any graph captured with it. A plugin
   * built against 1.0 never sees the field, so the host keeps setting rng_offset and does
   * not capture such a plugin's random ops. */
  const uint64_t* rng_offset_device;
} dlrt_kernel_args;

/* ==========================================================================================
 * Optional: stream capture into a replayable graph (CUDA Graphs). NULL table = not offered.
 * While a stream records, the work enqueued on it (kernels, copies, memsets, events) is kept
 * with its arguments as they were at enqueue time, and runs only when the graph is launched;
 * the stream must not be synchronised until capture_end.
 */
typedef struct dlrt_capture_api {
  size_t struct_size;
  /* Start recording the work enqueued on `stream` instead of running it. UNIMPLEMENTED means
   * "not on this stream's device or plugin instance" (capture switched off by an option):
   * since ABI 1.1 the host then runs that work uncaptured, so a plugin decides per instance
   * although the table is per library. */
  dlrt_status* (*capture_begin)(dlrt_stream* stream);
  /* Stop recording and instantiate what was recorded. */
  dlrt_status* (*capture_end)(dlrt_stream* stream, dlrt_graph_exec** out_graph);
  /* Enqueue one replay of `graph` on `stream`. */
  dlrt_status* (*graph_launch)(dlrt_graph_exec* graph, dlrt_stream* stream);
  void (*graph_destroy)(dlrt_graph_exec* graph);
} dlrt_capture_api;

/* ==========================================================================================
 * Optional: collectives (NCCL-like). NULL table = not offered. Buffers are device memory of
 * the communicator's device; work is enqueued on `stream`.
 *
 * Host-memory communicators (a transport such as MPI that owns no device): comm_create is
 * called with device NULL, buffers are host memory, every call is given stream NULL and
 * returns when its work is complete. A plugin that can make one says so with
 * DLRT_COLLECTIVES_HOST_MEMORY in `flags` (ABI 1.2); the host looks for its transport between
 * worker processes by that flag, never by a plugin's name. A plugin that cannot make one
 * returns UNIMPLEMENTED.
 * Every blocking call honours the communicator's timeout_ms: DEADLINE_EXCEEDED naming the
 * rank(s) still awaited; a peer the transport sees fail is UNAVAILABLE naming it.
 */
#define DLRT_COMM_ID_BYTES 128

/* dlrt_collective_api.flags (ABI 1.2): what the table offers beyond device collectives. */
#define DLRT_COLLECTIVES_HOST_MEMORY 0x1u /* comm_create(device NULL) works on host memory */

typedef struct dlrt_collective_api {
  size_t struct_size;
  /* Make a unique id on one rank; the host ships its bytes to the others (e.g. over MPI). */
  dlrt_status* (*comm_id_create)(dlrt_plugin* plugin, uint8_t out_id[DLRT_COMM_ID_BYTES]);
  /* Join communicator `id` as `rank` of `nranks`, on `device`. Blocks until all ranks join or
   * `timeout_ms` passes (DEADLINE_EXCEEDED). When one thread creates several communicators
   * (one per local device), it brackets the calls with group_begin/group_end. */
  dlrt_status* (*comm_create)(dlrt_device* device, const uint8_t id[DLRT_COMM_ID_BYTES],
                              int32_t nranks, int32_t rank, int64_t timeout_ms,
                              dlrt_comm** out_comm);
  dlrt_status* (*group_begin)(dlrt_plugin* plugin); /* NULL: creates need no grouping */
  dlrt_status* (*group_end)(dlrt_plugin* plugin);
  /* Release a healthy communicator. */
  void (*comm_destroy)(dlrt_comm* comm);
  /* Tear down after an error or timeout without waiting for peers (ncclCommAbort). */
  void (*comm_abort)(dlrt_comm* comm);
  dlrt_status* (*all_reduce)(dlrt_comm* comm, const void* send, void* recv, size_t count,
                             int32_t dtype, int32_t reduce_op, dlrt_stream* stream);
  dlrt_status* (*broadcast)(dlrt_comm* comm, const void* send, void* recv, size_t count,
                            int32_t dtype, int32_t root, dlrt_stream* stream);
  /* recv holds nranks * count elements, rank r's block at r * count. */
  dlrt_status* (*all_gather)(dlrt_comm* comm, const void* send, void* recv, size_t count,
                             int32_t dtype, dlrt_stream* stream);
  /* ---- ABI 1.2 ---- */
  /* DLRT_COLLECTIVES_* bits. Absent (a table whose struct_size ends before it, from a plugin
   * built against 1.0/1.1) reads as 0: device collectives only. */
  uint64_t flags;
} dlrt_collective_api;

/* ==========================================================================================
 * The function table a plugin fills in dlrt_plugin_init.
 * "required" entries must be non-NULL or the host refuses the plugin (naming the entry).
 */
typedef struct dlrt_plugin_api {
  size_t struct_size;   /* in: the host's sizeof; out: the size the plugin filled */
  uint32_t abi_major;   /* out: DLRT_ABI_MAJOR the plugin was built with */
  uint32_t abi_minor;   /* out: DLRT_ABI_MINOR the plugin was built with */
  const char* name;     /* out, required: short unique name, e.g. "cpu"; static storage */
  const char* platform; /* out, required: "onednn", "cuda", "reference", "null" */
  const char* version;  /* out: plugin version string; static storage */

  /* ---- plugin lifetime (required) ---- */
  /* Phase two of loading: initialise libraries, read options. A plugin whose platform is
   * present but unusable (no driver, no GPU) still succeeds here and reports the reason
   * from device_count. */
  dlrt_status* (*plugin_create)(const dlrt_plugin_create_args* args, dlrt_plugin** out_plugin);
  void (*plugin_destroy)(dlrt_plugin* plugin);

  /* ---- devices, memory, streams and events, ops ----
   * Required, with one exception (ABI 1.2): a plugin that owns no devices and offers
   * collectives (a host-memory transport such as MPI) may leave every entry from
   * device_count to kernel_destroy NULL, all of them together. The host then lists no
   * devices for it and never calls into these entries. Leaving some but not all NULL, or all
   * NULL without a collectives table, is refused naming the first NULL entry. A host older
   * than 1.2 refuses such a plugin; one that must load there keeps stub entries. */
  /* ---- devices ---- */
  /* Number of devices. When the platform cannot be used, return an error (UNAVAILABLE for
   * "no driver / no device") whose message says why; the host shows it and lists no devices. */
  dlrt_status* (*device_count)(dlrt_plugin* plugin, int32_t* out_count);
  /* Describe device `ordinal` without opening it. `out->struct_size` is set by the host. */
  dlrt_status* (*device_get_desc)(dlrt_plugin* plugin, int32_t ordinal, dlrt_device_desc* out);
  dlrt_status* (*device_open)(dlrt_plugin* plugin, int32_t ordinal, dlrt_device** out_device);
  void (*device_close)(dlrt_device* device);

  /* ---- memory ---- */
  /* Current free and total bytes of the physical device. */
  dlrt_status* (*memory_info)(dlrt_device* device, uint64_t* out_free, uint64_t* out_total);
  /* Allocate `bytes` (> 0) aligned to at least `alignment` (a power of two, <= 4096).
   * Out of memory is RESOURCE_EXHAUSTED. */
  dlrt_status* (*mem_alloc)(dlrt_device* device, size_t bytes, size_t alignment, void** out_ptr);
  void (*mem_free)(dlrt_device* device, void* ptr);
  /* Copies and memset. `stream` NULL: synchronous, done when the call returns. Otherwise
   * enqueued on `stream` and ordered with its other work; host buffers must then stay valid
   * until the stream reaches the copy. memcpy_d2d's `src` may be memory of another device of
   * the same plugin instance (how the host copies between a plugin's devices, after making
   * `stream` wait for the source's event). */
  dlrt_status* (*memcpy_h2d)(dlrt_device* device, void* dst, const void* src, size_t bytes,
                             dlrt_stream* stream);
  dlrt_status* (*memcpy_d2h)(dlrt_device* device, void* dst, const void* src, size_t bytes,
                             dlrt_stream* stream);
  dlrt_status* (*memcpy_d2d)(dlrt_device* device, void* dst, const void* src, size_t bytes,
                             dlrt_stream* stream);
  dlrt_status* (*memset)(dlrt_device* device, void* dst, int32_t byte_value, size_t bytes,
                         dlrt_stream* stream);
  /* Optional: page-locked host memory for fast transfers. NULL: the host uses malloc. */
  dlrt_status* (*host_alloc_pinned)(dlrt_device* device, size_t bytes, void** out_ptr);
  void (*host_free_pinned)(dlrt_device* device, void* ptr);

  /* ---- streams and events ---- */
  dlrt_status* (*stream_create)(dlrt_device* device, dlrt_stream** out_stream);
  void (*stream_destroy)(dlrt_stream* stream);
  /* Block until all work enqueued on `stream` has completed; reports asynchronous errors. */
  dlrt_status* (*stream_synchronize)(dlrt_stream* stream);
  dlrt_status* (*event_create)(dlrt_device* device, dlrt_event** out_event);
  void (*event_destroy)(dlrt_event* event);
  /* Mark the point on `stream` reached by the work enqueued so far. */
  dlrt_status* (*event_record)(dlrt_event* event, dlrt_stream* stream);
  /* Make later work on `stream` wait for `event` (may belong to another device of the
   * same plugin). */
  dlrt_status* (*stream_wait_event)(dlrt_stream* stream, dlrt_event* event);
  dlrt_status* (*event_synchronize)(dlrt_event* event);

  /* ---- ops (a skeleton with devices may answer UNIMPLEMENTED to everything) ---- */
  /* Can device `ordinal` run `op`? NULL = yes (and `out_cost`, if non-NULL, is filled);
   * otherwise the reason: UNIMPLEMENTED for "no kernel for this op / dtype / layout",
   * INVALID_ARGUMENT for a malformed descriptor. Does not open the device. */
  dlrt_status* (*op_supported)(dlrt_plugin* plugin, int32_t ordinal, const dlrt_op_desc* op,
                               dlrt_op_cost* out_cost);
  /* Prepare `op` once (oneDNN primitive, cuDNN plan, algorithm choice) and report the
   * scratch memory each run needs. Runs many times afterwards with no further preparation. */
  dlrt_status* (*kernel_create)(dlrt_device* device, const dlrt_op_desc* op,
                                dlrt_kernel** out_kernel, size_t* out_workspace_bytes);
  /* Enqueue one execution on `stream` (never NULL). Must not allocate device memory. */
  dlrt_status* (*kernel_run)(dlrt_kernel* kernel, dlrt_stream* stream,
                             const dlrt_kernel_args* args);
  void (*kernel_destroy)(dlrt_kernel* kernel);

  /* ---- optional tables ---- */
  const dlrt_capture_api* capture;        /* NULL: no graph capture */
  const dlrt_collective_api* collectives; /* NULL: no collectives */
} dlrt_plugin_api;

/* The entry point, phase one of loading. Fills `api` (whose struct_size the host set) and
 * nothing else: no library initialisation, no device access, cheap and side-effect free, so
 * the host can check the ABI before trusting the plugin with anything.
 * Returns NULL, or a status made with host->status_create. */
typedef dlrt_status* (*dlrt_plugin_init_fn)(const dlrt_host_api* host, dlrt_plugin_api* api);

/* Plugins define it as:
 *   DLRT_PLUGIN_EXPORT dlrt_status* dlrt_plugin_init(const dlrt_host_api*, dlrt_plugin_api*);
 */

/* Copy a filled table into the host's, writing at most the size the host asked for:
 * the helper every plugin uses at the end of dlrt_plugin_init. */
static inline void dlrt_plugin_api_fill(dlrt_plugin_api* host_api_table,
                                        const dlrt_plugin_api* filled) {
  size_t n = host_api_table->struct_size < filled->struct_size ? host_api_table->struct_size
                                                               : filled->struct_size;
  const unsigned char* src = (const unsigned char*)filled;
  unsigned char* dst = (unsigned char*)host_api_table;
  size_t i;
  for (i = sizeof(size_t); i < n; ++i) dst[i] = src[i];
  host_api_table->struct_size = n;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLRT_PLUGIN_H_ */
