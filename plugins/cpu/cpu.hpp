// cpu.hpp: internal types of the cpu plugin (libdlrt-cpu.so), shared by its translation units.
//
// What it is: one CPU device on oneDNN (v2 API). Device memory is host memory (64-byte aligned
// posix_memalign), so copies are memcpy; each dlrt stream wraps a dnnl::stream on the plugin's
// one dnnl::engine(cpu, 0). Kernels are oneDNN primitives made once in
// kernel_create and executed on the stream in kernel_run (see ops.hpp).
//
// What it is not: asynchronous. With oneDNN's CPU runtimes used here (OpenMP, sequential),
// a primitive executes on the calling thread before execute() returns, and copies are plain
// memcpy on the calling thread, so work is complete when the enqueueing call returns: events are
// complete as soon as they are recorded, and waits have nothing to wait for.
//
// Files: plugin.cc (init, create, options), device.cc (description: /proc, oneDNN ISA and
// version, peak estimate), calibration.cc (kernel choices measured on this CPU, cached),
// memory.cc, stream.cc, ops.cc/ops.hpp (the kernel table).
#pragma once

#include <dlrt/plugin.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <string>
#include <vector>

#include "calibration.hpp"
#include "kernel_choices.hpp"
#include "op_view.hpp"
#include "plugin_support.hpp"

namespace dlrt::cpu {

class Kernel;  // ops.hpp

// The plugin's version (dlrt_plugin_api.version); part of the calibration's cache key.
inline constexpr const char* kPluginVersion = "0.1.0";

// Everything device_get_desc hands out; pointers into these strings live until plugin_destroy.
struct DescStorage {
  std::string name, vendor, library_versions, isa, cpu_runtime;
  std::string calibration, kernel_choices;  // KernelChoices::source and describe()
  std::string calibration_key;              // what the cache files the choices under
  std::string native_dtypes, converted_dtypes;  // "f32,bf16", "f16,bf16": see build_desc
  double nominal_peak_gflops = 0, measured_peak_gflops = 0;  // see build_desc
  std::vector<dlrt_attr> attrs;
  std::vector<const dlrt_attr*> attr_ptrs;
  dlrt_device_desc desc{};
};

}  // namespace dlrt::cpu

struct dlrt_plugin {
  int32_t threads = 0;  // option `threads` resolved: 1..cores (0 given = all cores)
  // The loop kernels' AVX2 path (kernels/loop_simd.hpp): the CPU has AVX2 and oneDNN's
  // effective ISA includes it (ONEDNN_MAX_CPU_ISA=SSE41 turns both off). Set by build_desc.
  bool avx2 = false;
  // Option `winograd`: 3x3 stride-1 convolutions may run as Winograd F(4x4, 3x3)
  // (kernels/winograd_conv.hpp) where the CPU and the shape allow it and it is cheaper than
  // oneDNN's direct kernel (wino::worth_it), or as oneDNN's AVX-512 Winograd kernel
  // (kernels/prim_conv.cc); winograd_force (option value 2): dlrt's wherever it can run,
  // cheaper or not (tests and comparisons).
  bool winograd = true;
  bool winograd_force = false;
  // oneDNN's effective ISA is AVX-512: its direct convolutions use 16-lane FMAs, and dlrt's
  // Winograd kernel runs its AVX-512 build (winograd_conv.hpp, make_kernel and worth_it). Set
  // by build_desc.
  bool onednn_avx512 = false;
  // oneDNN's effective ISA has AVX512-BF16 (avx512_core_bf16 or amx): convolutions and
  // matmuls whose operands are all bf16 run as oneDNN's bf16 primitives (bf16 FMA units, f32
  // accumulation); elsewhere a bf16 op runs its f32 kernel between conversions
  // (widening_kernel.hpp). Set by build_desc.
  bool onednn_bf16 = false;
  // Option `calibrate` (or DLRT_CPU_CALIBRATE): whether build_desc measures the kernel
  // choices, reads them from the cache, or keeps the rules' defaults (calibration.hpp).
  dlrt::cpu::CalibrationMode calibrate = dlrt::cpu::CalibrationMode::automatic;
  // Which kernel runs where dlrt and oneDNN both have one (kernel_choices.hpp); filled by
  // build_desc, read-only afterwards.
  dlrt::cpu::KernelChoices choices;
  // Option `peak`: measure the f32 FMA peak at creation (peak.hpp) rather than take the
  // nominal threads x clock x FLOP per cycle for peak_gflops.
  bool measure_peak = true;
  // Set when the oneDNN engine could not be created: the platform is present but unusable,
  // and device_count returns UNAVAILABLE with this reason (plugin.h: create still succeeds).
  std::string unavailable;
  dnnl::engine engine;  // the one CPU engine, made in plugin_create
  dlrt::cpu::DescStorage info;
};

struct dlrt_device {
  dlrt_plugin* plugin;
};

struct dlrt_stream {
  dlrt_device* device;
  dnnl::stream stream;  // in-order; executes on the calling thread (see the file comment)
};

struct dlrt_event {
  dlrt_device* device;
  bool recorded = false;
};

struct dlrt_kernel {
  dlrt_device* device;
  dlrt::plugin::OpView op;                  // owned copy of the descriptor
  std::unique_ptr<dlrt::cpu::Kernel> impl;  // the prepared primitive(s)
  size_t workspace_bytes = 0;
};

namespace dlrt::cpu {

inline std::string prefix() { return std::string(plugin::g_plugin_name) + ": "; }

// device.cc
void build_desc(dlrt_plugin* plugin);
dlrt_status* device_count(dlrt_plugin* plugin, int32_t* out_count);
dlrt_status* device_get_desc(dlrt_plugin* plugin, int32_t ordinal, dlrt_device_desc* out);
dlrt_status* device_open(dlrt_plugin* plugin, int32_t ordinal, dlrt_device** out_device);
void device_close(dlrt_device* device);
// memory.cc
dlrt_status* memory_info(dlrt_device* device, uint64_t* out_free, uint64_t* out_total);
dlrt_status* mem_alloc(dlrt_device* device, size_t bytes, size_t alignment, void** out_ptr);
void mem_free(dlrt_device* device, void* ptr);
dlrt_status* memcpy_h2d(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream);
dlrt_status* memcpy_d2h(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream);
dlrt_status* memcpy_d2d(dlrt_device* device, void* dst, const void* src, size_t bytes,
                        dlrt_stream* stream);
dlrt_status* memset_device(dlrt_device* device, void* dst, int32_t byte_value, size_t bytes,
                           dlrt_stream* stream);
// stream.cc
void check_stream_device(dlrt_stream* stream, dlrt_device* device, const char* entry);
dlrt_status* stream_create(dlrt_device* device, dlrt_stream** out_stream);
void stream_destroy(dlrt_stream* stream);
dlrt_status* stream_synchronize(dlrt_stream* stream);
dlrt_status* event_create(dlrt_device* device, dlrt_event** out_event);
void event_destroy(dlrt_event* event);
dlrt_status* event_record(dlrt_event* event, dlrt_stream* stream);
dlrt_status* stream_wait_event(dlrt_stream* stream, dlrt_event* event);
dlrt_status* event_synchronize(dlrt_event* event);
// ops.cc
dlrt_status* op_supported(dlrt_plugin* plugin, int32_t ordinal, const dlrt_op_desc* op,
                          dlrt_op_cost* out_cost);
dlrt_status* kernel_create(dlrt_device* device, const dlrt_op_desc* op, dlrt_kernel** out_kernel,
                           size_t* out_workspace_bytes);
dlrt_status* kernel_run(dlrt_kernel* kernel, dlrt_stream* stream, const dlrt_kernel_args* args);
void kernel_destroy(dlrt_kernel* kernel);

}  // namespace dlrt::cpu
