// trace.hpp: the executor's profiler (docs/design.md section 6) — per-node timings of runs, written
// as Chrome trace-event JSON, which opens in Perfetto (ui.perfetto.dev) or chrome://tracing.
//
// The file is one object {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}:
//   - one "thread_name" metadata event ("ph":"M") per device stream of the executable, tid =
//     local device + 1, named "<device> stream" ("/device:CPU:0 stream"), so Perfetto shows
//     one row per stream; pid is always 1 (one executable per file);
//   - one complete event ("ph":"X") per kernel, copy and assign copy of each profiled run:
//     name = the node's name (the variable's for an assign copy), cat = its op ("copy",
//     "assign" for those), ts and dur in microseconds on a process-wide clock, args {op,
//     device, shapes ("f32(4,3), f32(3,5) -> f32(4,5)"), run}. A copy is drawn on the stream
//     of its destination device, where it is enqueued.
// With profiling never enabled (or no run since) traceEvents is an empty array.
//
// Timing: the run notes the host clock, enqueues the node, synchronises the stream and notes
// the clock again. That makes durations real on asynchronous devices, at the price of
// serialising the streams: a profiled run is slower and shows no overlap between devices.
// Events are kept in memory (host allocations happen only while profiling) up to
// kMaxEvents; later ones are counted in otherData.dropped_events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dlrt::core::exec {

class CompiledExecutable;

// One timed piece of work: step `step` of CompiledExecutable::steps, or assign copy
// `step - steps.size()`, in run `run` (0-based over the executable's life).
struct TraceEvent {
  uint32_t step = 0;
  uint32_t run = 0;
  int64_t start_ns = 0;  // trace_now_ns() before enqueuing
  int64_t dur_ns = 0;
};

// Nanoseconds on a monotonic clock since the first call in the process (shared by every
// executable, so traces of one process line up).
int64_t trace_now_ns();

class Profiler {
 public:
  static constexpr size_t kMaxEvents = size_t(1) << 20;

  bool enabled() const { return enabled_; }
  // `events_per_run`: how many events a run records, to reserve room for a few runs.
  void set_enabled(bool on, size_t events_per_run);
  void record(uint32_t step, uint32_t run, int64_t start_ns, int64_t end_ns);
  const std::vector<TraceEvent>& events() const { return events_; }
  uint64_t dropped() const { return dropped_; }

 private:
  bool enabled_ = false;
  std::vector<TraceEvent> events_;
  uint64_t dropped_ = 0;
};

// The trace of `ex` (see above) as JSON text.
std::string trace_json(const CompiledExecutable& ex);

// Writes trace_json(ex) to `path` atomically: into "<path>.tmp.<pid>", then renamed over
// `path`, so a reader never sees half a file. Throws an Error naming `path` and the system's
// reason (NOT_FOUND for a missing folder, PERMISSION_DENIED, else UNAVAILABLE).
void write_trace_file(const CompiledExecutable& ex, const std::string& path);

// DLRT_TRACE_FILE: the path of the executable that is the n-th (from 0) in this process to
// trace through the setting. The first gets `setting` itself, later ones a ".<n>" inserted
// before the extension ("trace.json", "trace.1.json", "trace.2.json"), so a training and an
// evaluation executable do not overwrite each other's file.
std::string next_trace_file(const std::string& setting);

}  // namespace dlrt::core::exec
