// reference.hpp: internal types of the reference plugin, shared by its translation units.
//
// What this plugin is: plain portable C++ device services, and every op
// as a naive loop accumulating in double — the numerical oracle the conformance tests compare
// every other device with. Device memory is host memory from std::aligned_alloc; streams run
// each piece of work at enqueue time, on the calling thread.
//
// It is also the mock device. Options make it N devices of any type and class ("GPU" devices
// for placement tests), with a per-device memory limit and a restricted op set, so multi-device
// and placement logic can be tested without hardware (see plugin.cc for the options). Its
// collectives table (collectives.cc) is an in-process NCCL double, so the core's
// device-collectives path is tested without GPUs.
//
// What it is not: fast, or a model of asynchrony. Because work completes before the enqueueing
// call returns, events are complete as soon as they are recorded and waits never block. The
// one exception is capture (option capture=1, capture.cc): a capturing stream records its work
// with frozen arguments and runs it only when the graph is launched, as CUDA Graphs do, so
// the executor's capture logic is tested without a GPU.
//
// Files: plugin.cc (init, create, options), device.cc (descriptions, open/close),
// memory.cc (allocation, accounting, copies), stream.cc (streams, events), ops.cc (the kernel
// table behind op_supported and kernel_*), capture.cc (the capture table).
#pragma once

#include <dlrt/plugin.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "op_view.hpp"
#include "plugin_support.hpp"

namespace dlrt::reference {

// Option collective_fault=<kind>:<n> (collectives.cc): the n-th collective call fails.
struct CollectiveFault {
  std::string kind;  // "" (no fault), "timeout" or "unavailable"
  int64_t at = 0;
};

// Plugin options after parsing and validation (plugin.cc).
struct Config {
  int32_t num_devices = 1;
  std::string device_type = "REF";  // used in device names: /device:REF:0
  dlrt_device_class device_class = DLRT_DEVICE_CLASS_CPU;
  std::string device_class_name = "cpu";
  bool ops_restricted = false;            // false: every op that has a kernel
  std::set<std::string> ops;              // when restricted: the only ops op_supported may accept
  uint64_t memory_limit = 0;              // bytes per device
  bool memory_limit_from_option = false;  // false: the limit is the host's MemTotal
  CollectiveFault collective_fault;       // option collective_fault (collectives.cc)
  bool collective_blocking = true;        // option collective_blocking=0: NCCL's non-blocking mode
  bool capture = false;                   // option capture=1: capture_begin records (capture.cc)
  int64_t capture_fault = 0;  // option capture_fault=<n>: the n-th capture_end fails (0: none)
};

// One piece of stream work with its arguments bound by value: what a capturing stream keeps.
using Work = std::function<void()>;

// One device: its description (built once in plugin_create; every pointer in `desc` points
// into this object and lives until plugin_destroy) and its memory accounting, which belongs to
// the device, not to a handle: every device_open of the same ordinal shares it, as handles to
// one GPU share its memory.
struct Device {
  int32_t ordinal = 0;
  std::string label;  // "REF:0": how messages name the device

  // Description storage.
  std::string name, vendor, type, library_versions, class_name;
  std::vector<dlrt_attr> attrs;
  std::vector<const dlrt_attr*> attr_ptrs;
  dlrt_device_desc desc{};

  // Memory accounting, guarded by `mu` (allocation is thread-safe per plugin.h).
  uint64_t limit = 0;
  std::mutex mu;
  std::map<uintptr_t, size_t> allocations;  // start address -> bytes actually allocated
  uint64_t in_use = 0;                      // sum of allocations' bytes
};

// Throws INVALID_ARGUMENT unless [ptr, ptr+bytes) lies inside one live allocation of `dev`.
// `what` names the operand ("memcpy_h2d dst"). Catches stale, foreign and overrunning
// pointers — part of being the oracle.
void check_device_range(Device& dev, const void* ptr, size_t bytes, const char* what);

// Frees every allocation still live on `dev`, logging a warning that names the leak.
void release_leftovers(Device& dev);

}  // namespace dlrt::reference

// The ABI's opaque handles, defined here for this plugin.
struct dlrt_plugin {
  dlrt::reference::Config config;
  std::vector<std::unique_ptr<dlrt::reference::Device>> devices;  // index = ordinal
  std::string ops_text;                      // "{add, matmul}": the restricted op set for messages
  std::atomic<int64_t> capture_ends{0};      // capture.cc counts them for capture_fault
  std::atomic<int64_t> collective_calls{0};  // collectives.cc counts them for collective_fault
};

struct dlrt_device {
  dlrt_plugin* plugin;
  dlrt::reference::Device* dev;
};

// In-order and synchronous: work runs when it is enqueued (see the file comment), except
// while capturing, when it is appended to `recording` instead (capture.cc).
struct dlrt_stream {
  dlrt_device* device;
  uint64_t completed = 0;  // pieces of work run on this stream, for diagnostics
  std::unique_ptr<std::vector<dlrt::reference::Work>> recording;  // non-null while capturing
};

struct dlrt_event {
  dlrt_device* device;
  bool recorded = false;
};

// A prepared op: the reference kernels need no preparation, so it is the owned copy of the
// descriptor it was made for (kernel_run checks its operands against it).
struct dlrt_kernel {
  dlrt_device* device;
  dlrt::plugin::OpView op;
};

namespace dlrt::reference {

// Prefix for errors: "reference: ".
inline std::string prefix() { return std::string(plugin::g_plugin_name) + ": "; }

// Stream work: runs `work` now (stream NULL, or not capturing) or, while `stream` captures,
// appends it to the recording. `work` must hold its arguments by value: a recorded piece runs
// at every launch of the graph, long after the enqueueing call returned.
template <typename Fn>
void run_or_record(dlrt_stream* stream, Fn&& work) {
  if (stream != nullptr && stream->recording) {
    stream->recording->emplace_back(std::forward<Fn>(work));
    return;
  }
  work();
  if (stream != nullptr) ++stream->completed;
}

// The table entries, one definition each in the file named.
// plugin.cc
dlrt_status* plugin_create(const dlrt_plugin_create_args* args, dlrt_plugin** out_plugin);
void plugin_destroy(dlrt_plugin* plugin);
// device.cc
void build_devices(dlrt_plugin* plugin);
Device& device_at(dlrt_plugin* plugin, int32_t ordinal);  // INVALID_ARGUMENT if out of range
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
// capture.cc
// The table for dlrt_plugin_api.capture: NULL for a host older than ABI 1.1, which would take
// capture_begin's UNIMPLEMENTED (capture off on an instance) as a failed run.
const dlrt_capture_api* capture_table(const dlrt_host_api* host);

// collectives.cc: the in-process NCCL test double (see that file).
const dlrt_collective_api* collective_table();
// Option collective_fault: "" or <timeout|unavailable>:<n>; INVALID_ARGUMENT otherwise.
CollectiveFault parse_collective_fault(const std::string& text);

}  // namespace dlrt::reference
