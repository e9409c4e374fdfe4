// compiled.hpp: the data of a compiled executable — what compile.cc builds once and run.cc
// walks on every run. Internal to core/exec.
//
// Everything a run touches is resolved to raw device pointers at compile time: planned
// values are offsets into one arena block per device, variables are their VariableStore
// buffers, constants have blocks of their own. A run therefore only enqueues work.
//
// Ownership: the executable owns its streams, events, kernels, blocks and staging buffers,
// and releases them (kernels, events and streams first, then memory) when destroyed; the
// graph and its context must outlive it.
#pragma once

#include <dlrt/plugin.h>

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "exec/device_memory.hpp"
#include "exec/executable.hpp"
#include "exec/trace.hpp"

namespace dlrt::core::exec {

// One device the executable uses, with its stream and memory. Indexed by "local device"
// (position in CompiledExecutable::devices), not by registry index.
struct DeviceRes {
  size_t registry = 0;  // registry index
  size_t plugin = 0;    // the plugin's index in the context (same plugin => d2d copies)
  std::string name;     // "/device:CPU:0"
  const dlrt_plugin_api* api = nullptr;
  dlrt_device* handle = nullptr;
  dlrt_stream* stream = nullptr;
  dlrt_event* done = nullptr;  // recorded after the step, when assigns must wait on it
  DeviceMemory values;         // the planned values (memory_plan.hpp)
  DeviceMemory workspace;      // the largest workspace of this device's kernels
  std::vector<DeviceMemory> constants;
  // The run count where random kernels read it when they execute (plugin.h, ABI 1.1
  // rng_offset_device): 8 bytes of this device's memory, rewritten from `rng_staging` on the
  // device's stream before every run's steps or replay, so a captured step draws fresh
  // numbers. Empty unless a random op of a >= 1.1 plugin runs here.
  DeviceMemory rng_offset;
  HostStaging rng_staging;  // 8 bytes: the value being copied, alive until the run's end
};

// A copy of `bytes` from local device `src` to `dst`. `direct` (same plugin): wait for the
// source stream's event, then memcpy_d2d on the destination stream. Otherwise staged through
// host memory: d2h on the source stream, wait for it, h2d on the destination stream.
struct Transfer {
  size_t src = 0, dst = 0;
  const void* from = nullptr;
  void* to = nullptr;
  size_t bytes = 0;
  bool direct = true;
  dlrt_event* event = nullptr;  // created on the source device; NULL when src == dst
  HostStaging staging;          // when !direct
};

struct KernelStep {
  size_t device = 0;  // local
  size_t placed = 0;  // index in placed_.nodes (for the trace's op and shapes)
  std::string name;   // graph node name, for errors
  dlrt_kernel* kernel = nullptr;
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
  dlrt_kernel_args args{};  // points into inputs/outputs; rng_offset set per run
};

struct CopyStep {
  size_t placed = 0;  // index in placed_.nodes
  std::string name;
  Transfer transfer;
};

// An assign that did not run in place: after the step, its value is copied into `variable`.
struct AssignCopy {
  NodeId variable = 0;
  Transfer transfer;
};

using Step = std::variant<KernelStep, CopyStep>;

// A feed: the caller's tensor is copied into the placeholder's buffer.
struct FeedSlot {
  std::string name;   // the placeholder
  size_t device = 0;  // local
  void* to = nullptr;
  ops::TensorType type;
  size_t bytes = 0;
  HostStaging staging;  // for a feed tensor on another plugin's device
};

// A fetch: the value's buffer is copied to the caller's tensor (or a new one).
struct FetchSlot {
  std::string name;
  size_t device = 0;  // local device holding the value
  const void* from = nullptr;
  ops::TensorType type;
  size_t bytes = 0;
  HostStaging staging;  // for a fetch tensor on another plugin's device
};

class CompiledExecutable final : public Executable {
 public:
  CompiledExecutable(Graph& graph, const CompileOptions& options)
      : graph_(&graph), options_(options) {}
  ~CompiledExecutable() override;

  void run(const std::vector<const dlrt_tensor*>& feeds,
           std::vector<dlrt_tensor*>& fetches) override;
  const Graph& graph() const override { return *graph_; }
  const std::vector<std::string>& pass_log() const override { return pass_log_; }
  const PlacedGraph& placed() const override { return placed_; }
  Stats stats() const override { return stats_; }
  void set_profiling(bool enabled) override;
  void write_trace(const std::string& path) const override { write_trace_file(*this, path); }
  void set_run_count(uint64_t next_run) override { runs_ = next_run; }

  // ---- built by compile.cc ----
  // The graph passes' working copy, when they changed anything (declared first: destroyed
  // last, after everything that was built from it); graph_ then points at it.
  std::unique_ptr<Graph> rewritten;
  std::vector<std::string> pass_log_;
  Graph* graph_;
  CompileOptions options_;
  PlacedGraph placed_;
  std::vector<DeviceRes> devices;
  std::vector<Step> steps;
  std::vector<FeedSlot> feeds;
  std::vector<FetchSlot> fetches;
  std::vector<AssignCopy> assign_copies;  // assigns that did not run in place
  size_t in_place_assigns = 0;            // for tests and logs
  // One device offering capture; random ops only if they read the run count from device
  // memory. Cleared for good when capture_begin declines (UNIMPLEMENTED), or when capturing
  // fails (capture_end or the first launch): then capture_failure says why.
  bool capture_allowed = false;
  std::string capture_failure;
  Stats stats_;
  Profiler profiler;
  std::string trace_file;  // DLRT_TRACE_FILE: written when destroyed ("" = none)

 private:
  void write_rng_offsets();
  void enqueue_steps();
  void capture_or_run_steps(const dlrt_capture_api* cap);
  void disable_capture(std::string reason);
  void profile_steps();
  void enqueue(Transfer& t);
  void synchronize(size_t device);
  void release_capture() noexcept;

  // The run count random ops draw with; set_run_count moves it. Capture starts at this
  // executable's second run (stats_.runs), whatever the count says.
  uint64_t runs_ = 0;
  dlrt_graph_exec* captured_ = nullptr;
  std::vector<char> waited_;  // run(): streams that already waited before an assign copy
};

}  // namespace dlrt::core::exec
