// executable.hpp: a compiled subgraph (docs/design.md section 4, "Executor").
//
// compile: choose the nodes the fetches need (and, with run_assigns, every assign of the
// graph: a training step; without, none: evaluation and prediction); place them
// (core/placement); place and initialise new variables; plan buffers per device by liveness
// (values whose lifetimes do not overlap share memory; in-place updates write into their
// variable); create every kernel and workspace; create a stream per device and the events
// that order cross-device copies. run: copy feeds in, enqueue every kernel in order on its
// device's stream (waiting on events where a copy crosses devices), apply assigns, copy
// fetches out, synchronise only what the fetches need. No allocation and no kernel creation
// inside run. Where the executable runs on one device whose plugin offers capture (plugin.h's
// capture table), runs from the second on replay the captured step instead of enqueuing.
#pragma once

#include <dlrt/dlrt.h>

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "placement/placement.hpp"

namespace dlrt::core {

struct CompileOptions {
  bool soft_placement = true;
  bool log_device_placement = false;
  bool use_capture = true;
  // Apply every assign of the graph at the end of each run (a training step); false: none.
  bool run_assigns = false;
  // Place every unrequested op on one device chosen for the executable (placement/
  // auto_device.hpp); false: each op by priority.
  bool auto_device = false;
  // The graph passes (core/passes/passes.hpp): "" = the context's DLRT_GRAPH_PASSES, else
  // every pass; or a list as PassSet::parse reads it ("default,-fold_constants", "none").
  std::string graph_passes;
};

class Executable {
 public:
  static std::unique_ptr<Executable> compile(Graph& graph, const std::vector<ValueRef>& feeds,
                                             const std::vector<ValueRef>& fetches,
                                             const CompileOptions& options);
  virtual ~Executable() = default;

  // feeds/fetches as in dlrt_executable_run.
  virtual void run(const std::vector<const dlrt_tensor*>& feeds,
                   std::vector<dlrt_tensor*>& fetches) = 0;

  // The graph the executable runs: the caller's, or the copy the graph passes rewrote
  // (Graph::derive; same ids for the caller's nodes).
  virtual const Graph& graph() const = 0;
  // What the graph passes changed, one line per change ("fuse_bias_activation: ..."); empty
  // when they changed nothing or were off.
  virtual const std::vector<std::string>& pass_log() const = 0;
  virtual const PlacedGraph& placed() const = 0;
  // Statistics for tests and dlbench (dlrt_executable_run_stats): kernels created at compile,
  // plugin mem_alloc calls made by run() so far (must stay 0), runs replayed from a captured
  // graph, runs completed.
  struct Stats {
    size_t kernels = 0;
    size_t run_allocations = 0;
    size_t captured_replays = 0;
    size_t runs = 0;
  };
  virtual Stats stats() const = 0;

  // Profiling (trace.hpp): while enabled, each run times every kernel and copy, synchronising
  // its stream after each one (so timings are real on asynchronous devices, and runs are
  // slower). write_trace writes what was recorded so far as Chrome trace-event JSON,
  // atomically; throws naming `path` when it cannot be written.
  virtual void set_profiling(bool enabled) = 0;
  virtual void write_trace(const std::string& path) const = 0;
  // The run count the next run starts from: random ops draw with rng_offset = run count, so a
  // resumed training loop sets it to the steps already taken (dlrt_executable_set_run_count).
  virtual void set_run_count(uint64_t next_run) = 0;
};

}  // namespace dlrt::core
