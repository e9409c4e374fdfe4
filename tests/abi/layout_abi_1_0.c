/* layout_abi_1_0.c: the layout of plugin/host ABI 1.0 as shipped, frozen.
 *
 * Every struct of types.h, plugin.h and dlrt.h, every field's offset and size, and every enum
 * value, as they were when ABI 1.0 shipped, on LP64 (Linux x86-64 and aarch64). Nothing here
 * runs: if a header change moves, resizes or renumbers anything a 1.0 plugin or host relies
 * on, this file stops compiling and the build fails, naming the field.
 *
 * The rules it enforces (plugin.h, "Versioning"):
 *   - a shipped field never moves or changes size; new fields go at the end of a struct;
 *   - enum values are never renumbered;
 *   - so while DLRT_ABI_MINOR is 0 each struct's size is exactly its 1.0 size, and after a
 *     minor bump it may only grow. The new minor gets its own file (layout_abi_1_1.c) pinning
 *     its appended fields and sizes; this file is never edited, only the sizes below relax to
 *     ">=" by themselves.
 * C11 for _Static_assert; the headers themselves are C99 (see headers_c99.c).
 */
#include <stddef.h>

#include "dlrt/dlrt.h"
#include "dlrt/plugin.h"
#include "dlrt/status.h"
#include "dlrt/types.h"

#if !defined(__LP64__)
#error "layout_abi_1_0.c pins the LP64 layout; build it only on LP64 targets"
#endif

/* Field `field` of `type` lies at byte `offset` and is `size` bytes long. */
#define PIN_FIELD(type, field, offset, size)                                                 \
  _Static_assert(offsetof(type, field) == (offset),                                          \
                 "ABI 1.0 break: " #type "." #field " moved (expected offset " #offset ")"); \
  _Static_assert(sizeof(((type*)0)->field) == (size),                                        \
                 "ABI 1.0 break: " #type "." #field " changed size (expected " #size ")")

/* `type` is `size` bytes in ABI 1.0 (what a 1.0 writer puts in struct_size). */
#if DLRT_ABI_MAJOR != 1
#error "this file pins ABI 1.x; a new major starts its own layout file"
#elif DLRT_ABI_MINOR == 0
#define PIN_SIZE(type, size) \
  _Static_assert(sizeof(type) == (size), "ABI 1.0 break: sizeof(" #type ") is not " #size)
#else
#define PIN_SIZE(type, size)             \
  _Static_assert(sizeof(type) >= (size), \
                 "ABI break: sizeof(" #type ") shrank below its 1.0 size " #size)
#endif

/* An enum constant keeps its number. */
#define PIN_ENUM(name, value) \
  _Static_assert((name) == (value), "ABI 1.0 break: " #name " renumbered (expected " #value ")")

/* ---- version and fixed sizes ---- */
_Static_assert(DLRT_ABI_MAJOR == 1, "this file pins ABI major 1");
_Static_assert(DLRT_ABI_MINOR >= 0 && DLRT_ABI_MINOR_FLOOR <= DLRT_ABI_MINOR,
               "the minor floor cannot be above the current minor");
_Static_assert(DLRT_MAX_RANK == 8, "ABI 1.0 break: DLRT_MAX_RANK sizes dlrt_tensor_desc.dims");
_Static_assert(DLRT_COMM_ID_BYTES == 128, "ABI 1.0 break: DLRT_COMM_ID_BYTES changed");
_Static_assert(sizeof(size_t) == 8 && sizeof(void*) == 8 && sizeof(double) == 8, "LP64 expected");

/* ---- dlrt_tensor_desc (types.h) ---- */
PIN_SIZE(dlrt_tensor_desc, 88);
PIN_FIELD(dlrt_tensor_desc, struct_size, 0, 8);
PIN_FIELD(dlrt_tensor_desc, dtype, 8, 4);
PIN_FIELD(dlrt_tensor_desc, rank, 12, 4);
PIN_FIELD(dlrt_tensor_desc, dims, 16, 64);
PIN_FIELD(dlrt_tensor_desc, layout, 80, 4);
PIN_FIELD(dlrt_tensor_desc, reserved0, 84, 4);

/* ---- dlrt_attr (types.h) ---- */
PIN_SIZE(dlrt_attr, 72);
PIN_FIELD(dlrt_attr, struct_size, 0, 8);
PIN_FIELD(dlrt_attr, name, 8, 8);
PIN_FIELD(dlrt_attr, type, 16, 4);
PIN_FIELD(dlrt_attr, reserved0, 20, 4);
PIN_FIELD(dlrt_attr, i, 24, 8);
PIN_FIELD(dlrt_attr, f, 32, 8);
PIN_FIELD(dlrt_attr, s, 40, 8);
PIN_FIELD(dlrt_attr, ints, 48, 8);
PIN_FIELD(dlrt_attr, floats, 56, 8);
PIN_FIELD(dlrt_attr, count, 64, 8);

/* ---- dlrt_host_api (plugin.h) ---- */
PIN_SIZE(dlrt_host_api, 40);
PIN_FIELD(dlrt_host_api, struct_size, 0, 8);
PIN_FIELD(dlrt_host_api, abi_major, 8, 4);
PIN_FIELD(dlrt_host_api, abi_minor, 12, 4);
PIN_FIELD(dlrt_host_api, status_create, 16, 8);
PIN_FIELD(dlrt_host_api, status_free, 24, 8);
PIN_FIELD(dlrt_host_api, log, 32, 8);

/* ---- dlrt_device_desc (plugin.h) ---- */
PIN_SIZE(dlrt_device_desc, 136);
PIN_FIELD(dlrt_device_desc, struct_size, 0, 8);
PIN_FIELD(dlrt_device_desc, device_class, 8, 4);
PIN_FIELD(dlrt_device_desc, ordinal, 12, 4);
PIN_FIELD(dlrt_device_desc, type, 16, 8);
PIN_FIELD(dlrt_device_desc, name, 24, 8);
PIN_FIELD(dlrt_device_desc, vendor, 32, 8);
PIN_FIELD(dlrt_device_desc, pci_bus_id, 40, 8);
PIN_FIELD(dlrt_device_desc, uuid, 48, 8);
PIN_FIELD(dlrt_device_desc, compute_capability_major, 56, 4);
PIN_FIELD(dlrt_device_desc, compute_capability_minor, 60, 4);
PIN_FIELD(dlrt_device_desc, core_count, 64, 4);
PIN_FIELD(dlrt_device_desc, reserved0, 68, 4);
PIN_FIELD(dlrt_device_desc, memory_total, 72, 8);
PIN_FIELD(dlrt_device_desc, driver_version, 80, 8);
PIN_FIELD(dlrt_device_desc, library_versions, 88, 8);
PIN_FIELD(dlrt_device_desc, peak_gflops, 96, 8);
PIN_FIELD(dlrt_device_desc, memory_bandwidth_gbps, 104, 8);
PIN_FIELD(dlrt_device_desc, launch_overhead_us, 112, 8);
PIN_FIELD(dlrt_device_desc, num_attrs, 120, 8);
PIN_FIELD(dlrt_device_desc, attrs, 128, 8);

/* ---- dlrt_plugin_create_args (plugin.h) ---- */
PIN_SIZE(dlrt_plugin_create_args, 32);
PIN_FIELD(dlrt_plugin_create_args, struct_size, 0, 8);
PIN_FIELD(dlrt_plugin_create_args, host, 8, 8);
PIN_FIELD(dlrt_plugin_create_args, num_options, 16, 8);
PIN_FIELD(dlrt_plugin_create_args, options, 24, 8);

/* ---- dlrt_op_cost (plugin.h) ---- */
PIN_SIZE(dlrt_op_cost, 32);
PIN_FIELD(dlrt_op_cost, struct_size, 0, 8);
PIN_FIELD(dlrt_op_cost, estimated_us, 8, 8);
PIN_FIELD(dlrt_op_cost, flops, 16, 8);
PIN_FIELD(dlrt_op_cost, bytes, 24, 8);

/* ---- dlrt_op_desc (plugin.h) ---- */
PIN_SIZE(dlrt_op_desc, 64);
PIN_FIELD(dlrt_op_desc, struct_size, 0, 8);
PIN_FIELD(dlrt_op_desc, op, 8, 8);
PIN_FIELD(dlrt_op_desc, num_inputs, 16, 8);
PIN_FIELD(dlrt_op_desc, inputs, 24, 8);
PIN_FIELD(dlrt_op_desc, num_outputs, 32, 8);
PIN_FIELD(dlrt_op_desc, outputs, 40, 8);
PIN_FIELD(dlrt_op_desc, num_attrs, 48, 8);
PIN_FIELD(dlrt_op_desc, attrs, 56, 8);

/* ---- dlrt_kernel_args (plugin.h) ---- */
PIN_SIZE(dlrt_kernel_args, 64);
PIN_FIELD(dlrt_kernel_args, struct_size, 0, 8);
PIN_FIELD(dlrt_kernel_args, num_inputs, 8, 8);
PIN_FIELD(dlrt_kernel_args, inputs, 16, 8);
PIN_FIELD(dlrt_kernel_args, num_outputs, 24, 8);
PIN_FIELD(dlrt_kernel_args, outputs, 32, 8);
PIN_FIELD(dlrt_kernel_args, workspace, 40, 8);
PIN_FIELD(dlrt_kernel_args, workspace_bytes, 48, 8);
PIN_FIELD(dlrt_kernel_args, rng_offset, 56, 8);

/* ---- dlrt_capture_api (plugin.h) ---- */
PIN_SIZE(dlrt_capture_api, 40);
PIN_FIELD(dlrt_capture_api, struct_size, 0, 8);
PIN_FIELD(dlrt_capture_api, capture_begin, 8, 8);
PIN_FIELD(dlrt_capture_api, capture_end, 16, 8);
PIN_FIELD(dlrt_capture_api, graph_launch, 24, 8);
PIN_FIELD(dlrt_capture_api, graph_destroy, 32, 8);

/* ---- dlrt_collective_api (plugin.h) ---- */
PIN_SIZE(dlrt_collective_api, 80);
PIN_FIELD(dlrt_collective_api, struct_size, 0, 8);
PIN_FIELD(dlrt_collective_api, comm_id_create, 8, 8);
PIN_FIELD(dlrt_collective_api, comm_create, 16, 8);
PIN_FIELD(dlrt_collective_api, group_begin, 24, 8);
PIN_FIELD(dlrt_collective_api, group_end, 32, 8);
PIN_FIELD(dlrt_collective_api, comm_destroy, 40, 8);
PIN_FIELD(dlrt_collective_api, comm_abort, 48, 8);
PIN_FIELD(dlrt_collective_api, all_reduce, 56, 8);
PIN_FIELD(dlrt_collective_api, broadcast, 64, 8);
PIN_FIELD(dlrt_collective_api, all_gather, 72, 8);

/* ---- dlrt_plugin_api (plugin.h) ---- */
PIN_SIZE(dlrt_plugin_api, 272);
PIN_FIELD(dlrt_plugin_api, struct_size, 0, 8);
PIN_FIELD(dlrt_plugin_api, abi_major, 8, 4);
PIN_FIELD(dlrt_plugin_api, abi_minor, 12, 4);
PIN_FIELD(dlrt_plugin_api, name, 16, 8);
PIN_FIELD(dlrt_plugin_api, platform, 24, 8);
PIN_FIELD(dlrt_plugin_api, version, 32, 8);
PIN_FIELD(dlrt_plugin_api, plugin_create, 40, 8);
PIN_FIELD(dlrt_plugin_api, plugin_destroy, 48, 8);
PIN_FIELD(dlrt_plugin_api, device_count, 56, 8);
PIN_FIELD(dlrt_plugin_api, device_get_desc, 64, 8);
PIN_FIELD(dlrt_plugin_api, device_open, 72, 8);
PIN_FIELD(dlrt_plugin_api, device_close, 80, 8);
PIN_FIELD(dlrt_plugin_api, memory_info, 88, 8);
PIN_FIELD(dlrt_plugin_api, mem_alloc, 96, 8);
PIN_FIELD(dlrt_plugin_api, mem_free, 104, 8);
PIN_FIELD(dlrt_plugin_api, memcpy_h2d, 112, 8);
PIN_FIELD(dlrt_plugin_api, memcpy_d2h, 120, 8);
PIN_FIELD(dlrt_plugin_api, memcpy_d2d, 128, 8);
PIN_FIELD(dlrt_plugin_api, memset, 136, 8);
PIN_FIELD(dlrt_plugin_api, host_alloc_pinned, 144, 8);
PIN_FIELD(dlrt_plugin_api, host_free_pinned, 152, 8);
PIN_FIELD(dlrt_plugin_api, stream_create, 160, 8);
PIN_FIELD(dlrt_plugin_api, stream_destroy, 168, 8);
PIN_FIELD(dlrt_plugin_api, stream_synchronize, 176, 8);
PIN_FIELD(dlrt_plugin_api, event_create, 184, 8);
PIN_FIELD(dlrt_plugin_api, event_destroy, 192, 8);
PIN_FIELD(dlrt_plugin_api, event_record, 200, 8);
PIN_FIELD(dlrt_plugin_api, stream_wait_event, 208, 8);
PIN_FIELD(dlrt_plugin_api, event_synchronize, 216, 8);
PIN_FIELD(dlrt_plugin_api, op_supported, 224, 8);
PIN_FIELD(dlrt_plugin_api, kernel_create, 232, 8);
PIN_FIELD(dlrt_plugin_api, kernel_run, 240, 8);
PIN_FIELD(dlrt_plugin_api, kernel_destroy, 248, 8);
PIN_FIELD(dlrt_plugin_api, capture, 256, 8);
PIN_FIELD(dlrt_plugin_api, collectives, 264, 8);

/* ---- dlrt_device_spec (dlrt.h) ---- */
PIN_SIZE(dlrt_device_spec, 120);
PIN_FIELD(dlrt_device_spec, struct_size, 0, 8);
PIN_FIELD(dlrt_device_spec, job, 8, 64);
PIN_FIELD(dlrt_device_spec, replica, 72, 4);
PIN_FIELD(dlrt_device_spec, task, 76, 4);
PIN_FIELD(dlrt_device_spec, type, 80, 32);
PIN_FIELD(dlrt_device_spec, index, 112, 4);

/* ---- dlrt_logical_device_config (dlrt.h) ---- */
PIN_SIZE(dlrt_logical_device_config, 32);
PIN_FIELD(dlrt_logical_device_config, struct_size, 0, 8);
PIN_FIELD(dlrt_logical_device_config, physical_device, 8, 8);
PIN_FIELD(dlrt_logical_device_config, count, 16, 4);
PIN_FIELD(dlrt_logical_device_config, reserved0, 20, 4);
PIN_FIELD(dlrt_logical_device_config, memory_limits, 24, 8);

/* ---- dlrt_context_options (dlrt.h) ---- */
PIN_SIZE(dlrt_context_options, 96);
PIN_FIELD(dlrt_context_options, struct_size, 0, 8);
PIN_FIELD(dlrt_context_options, plugin_paths, 8, 8);
PIN_FIELD(dlrt_context_options, num_plugin_paths, 16, 8);
PIN_FIELD(dlrt_context_options, search_default_paths, 24, 4);
PIN_FIELD(dlrt_context_options, log_level, 28, 4);
PIN_FIELD(dlrt_context_options, visible_devices, 32, 8);
PIN_FIELD(dlrt_context_options, plugin_options, 40, 8);
PIN_FIELD(dlrt_context_options, logical_devices, 48, 8);
PIN_FIELD(dlrt_context_options, num_logical_devices, 56, 8);
PIN_FIELD(dlrt_context_options, log_device_placement, 64, 4);
PIN_FIELD(dlrt_context_options, soft_placement, 68, 4);
/* Grown at its end (host-API structs may; the core reads only up to the caller's struct_size):
 * the device memory options. */
PIN_FIELD(dlrt_context_options, memory_growth, 72, 4);
PIN_FIELD(dlrt_context_options, reserved0, 76, 4);
PIN_FIELD(dlrt_context_options, memory_fraction, 80, 8);
PIN_FIELD(dlrt_context_options, gpu_memory_limit, 88, 8);

/* ---- dlrt_plugin_info (dlrt.h) ---- */
PIN_SIZE(dlrt_plugin_info, 72);
PIN_FIELD(dlrt_plugin_info, struct_size, 0, 8);
PIN_FIELD(dlrt_plugin_info, path, 8, 8);
PIN_FIELD(dlrt_plugin_info, name, 16, 8);
PIN_FIELD(dlrt_plugin_info, platform, 24, 8);
PIN_FIELD(dlrt_plugin_info, version, 32, 8);
PIN_FIELD(dlrt_plugin_info, state, 40, 4);
PIN_FIELD(dlrt_plugin_info, phase, 44, 4);
PIN_FIELD(dlrt_plugin_info, abi_major, 48, 4);
PIN_FIELD(dlrt_plugin_info, abi_minor, 52, 4);
PIN_FIELD(dlrt_plugin_info, error_code, 56, 4);
PIN_FIELD(dlrt_plugin_info, device_count, 60, 4);
PIN_FIELD(dlrt_plugin_info, error, 64, 8);

/* ---- dlrt_device_info (dlrt.h) ---- */
PIN_SIZE(dlrt_device_info, 192);
PIN_FIELD(dlrt_device_info, struct_size, 0, 8);
PIN_FIELD(dlrt_device_info, name, 8, 8);
PIN_FIELD(dlrt_device_info, full_name, 16, 8);
PIN_FIELD(dlrt_device_info, type, 24, 8);
PIN_FIELD(dlrt_device_info, index, 32, 4);
PIN_FIELD(dlrt_device_info, device_class, 36, 4);
PIN_FIELD(dlrt_device_info, platform, 40, 8);
PIN_FIELD(dlrt_device_info, plugin, 48, 8);
PIN_FIELD(dlrt_device_info, plugin_ordinal, 56, 4);
PIN_FIELD(dlrt_device_info, logical_index, 60, 4);
PIN_FIELD(dlrt_device_info, logical_count, 64, 4);
PIN_FIELD(dlrt_device_info, reserved0, 68, 4);
PIN_FIELD(dlrt_device_info, memory_total, 72, 8);
PIN_FIELD(dlrt_device_info, memory_limit, 80, 8);
PIN_FIELD(dlrt_device_info, model, 88, 8);
PIN_FIELD(dlrt_device_info, vendor, 96, 8);
PIN_FIELD(dlrt_device_info, pci_bus_id, 104, 8);
PIN_FIELD(dlrt_device_info, uuid, 112, 8);
PIN_FIELD(dlrt_device_info, compute_capability_major, 120, 4);
PIN_FIELD(dlrt_device_info, compute_capability_minor, 124, 4);
PIN_FIELD(dlrt_device_info, core_count, 128, 4);
PIN_FIELD(dlrt_device_info, reserved1, 132, 4);
PIN_FIELD(dlrt_device_info, driver_version, 136, 8);
PIN_FIELD(dlrt_device_info, library_versions, 144, 8);
PIN_FIELD(dlrt_device_info, peak_gflops, 152, 8);
PIN_FIELD(dlrt_device_info, memory_bandwidth_gbps, 160, 8);
PIN_FIELD(dlrt_device_info, launch_overhead_us, 168, 8);
PIN_FIELD(dlrt_device_info, num_attrs, 176, 8);
PIN_FIELD(dlrt_device_info, attrs, 184, 8);

/* ---- dlrt_setting (dlrt.h) ---- */
PIN_SIZE(dlrt_setting, 40);
PIN_FIELD(dlrt_setting, struct_size, 0, 8);
PIN_FIELD(dlrt_setting, name, 8, 8);
PIN_FIELD(dlrt_setting, value, 16, 8);
PIN_FIELD(dlrt_setting, source, 24, 4);
PIN_FIELD(dlrt_setting, reserved0, 28, 4);
PIN_FIELD(dlrt_setting, help, 32, 8);

/* ---- enum values ---- */
/* dlrt_code (status.h) */
PIN_ENUM(DLRT_OK, 0);
PIN_ENUM(DLRT_CANCELLED, 1);
PIN_ENUM(DLRT_UNKNOWN, 2);
PIN_ENUM(DLRT_INVALID_ARGUMENT, 3);
PIN_ENUM(DLRT_DEADLINE_EXCEEDED, 4);
PIN_ENUM(DLRT_NOT_FOUND, 5);
PIN_ENUM(DLRT_ALREADY_EXISTS, 6);
PIN_ENUM(DLRT_PERMISSION_DENIED, 7);
PIN_ENUM(DLRT_RESOURCE_EXHAUSTED, 8);
PIN_ENUM(DLRT_FAILED_PRECONDITION, 9);
PIN_ENUM(DLRT_ABORTED, 10);
PIN_ENUM(DLRT_OUT_OF_RANGE, 11);
PIN_ENUM(DLRT_UNIMPLEMENTED, 12);
PIN_ENUM(DLRT_INTERNAL, 13);
PIN_ENUM(DLRT_UNAVAILABLE, 14);
PIN_ENUM(DLRT_DATA_LOSS, 15);
PIN_ENUM(DLRT_UNAUTHENTICATED, 16);
/* dlrt_dtype (types.h) */
PIN_ENUM(DLRT_DTYPE_INVALID, 0);
PIN_ENUM(DLRT_F32, 1);
PIN_ENUM(DLRT_F16, 2);
PIN_ENUM(DLRT_BF16, 3);
PIN_ENUM(DLRT_F64, 4);
PIN_ENUM(DLRT_I32, 5);
PIN_ENUM(DLRT_I64, 6);
PIN_ENUM(DLRT_U8, 7);
PIN_ENUM(DLRT_I8, 8);
PIN_ENUM(DLRT_BOOL, 9);
/* dlrt_layout (types.h) */
PIN_ENUM(DLRT_LAYOUT_DENSE, 0);
PIN_ENUM(DLRT_LAYOUT_DEVICE_PRIVATE, 1024);
/* dlrt_attr_type (types.h) */
PIN_ENUM(DLRT_ATTR_NONE, 0);
PIN_ENUM(DLRT_ATTR_INT, 1);
PIN_ENUM(DLRT_ATTR_FLOAT, 2);
PIN_ENUM(DLRT_ATTR_STRING, 3);
PIN_ENUM(DLRT_ATTR_BOOL, 4);
PIN_ENUM(DLRT_ATTR_DTYPE, 5);
PIN_ENUM(DLRT_ATTR_INTS, 6);
PIN_ENUM(DLRT_ATTR_FLOATS, 7);
/* dlrt_device_class (types.h) */
PIN_ENUM(DLRT_DEVICE_CLASS_UNKNOWN, 0);
PIN_ENUM(DLRT_DEVICE_CLASS_CPU, 1);
PIN_ENUM(DLRT_DEVICE_CLASS_GPU, 2);
PIN_ENUM(DLRT_DEVICE_CLASS_ACCEL, 3);
/* dlrt_log_level (types.h) */
PIN_ENUM(DLRT_LOG_ERROR, 0);
PIN_ENUM(DLRT_LOG_WARNING, 1);
PIN_ENUM(DLRT_LOG_INFO, 2);
PIN_ENUM(DLRT_LOG_DEBUG, 3);
/* dlrt_reduce_op (types.h) */
PIN_ENUM(DLRT_REDUCE_SUM, 0);
PIN_ENUM(DLRT_REDUCE_PROD, 1);
PIN_ENUM(DLRT_REDUCE_MAX, 2);
PIN_ENUM(DLRT_REDUCE_MIN, 3);
PIN_ENUM(DLRT_REDUCE_AVG, 4);
/* dlrt_plugin_state (dlrt.h) */
PIN_ENUM(DLRT_PLUGIN_LOADED, 0);
PIN_ENUM(DLRT_PLUGIN_REFUSED, 1);
PIN_ENUM(DLRT_PLUGIN_FAILED, 2);
/* dlrt_plugin_phase (dlrt.h) */
PIN_ENUM(DLRT_PHASE_SEARCH, 0);
PIN_ENUM(DLRT_PHASE_OPEN, 1);
PIN_ENUM(DLRT_PHASE_ABI, 2);
PIN_ENUM(DLRT_PHASE_CREATE, 3);
PIN_ENUM(DLRT_PHASE_DEVICES, 4);
PIN_ENUM(DLRT_PHASE_READY, 5);
/* dlrt_setting_source (dlrt.h) */
PIN_ENUM(DLRT_SOURCE_DEFAULT, 0);
PIN_ENUM(DLRT_SOURCE_ENVIRONMENT, 1);
PIN_ENUM(DLRT_SOURCE_API, 2);
