// run.cc: CompiledExecutable::run and teardown. A run only enqueues work on the streams made
// at compile time, into buffers made at compile time:
//   1. feeds: the caller's tensors are copied into the placeholders' buffers, and the run
//      count into each device's rng offset word (random kernels read it when they execute);
//   2. the steps, in placed order: kernels on their device's stream, copies ordered by events
//      (or, from the second run of a capturable executable, one replay of the captured step:
//      the second run is recorded and launched, later runs launch it again);
//   3. fetches are copied out (so a fetched variable shows its value at the start of the run),
//      then assigns that did not run in place copy their value into the variable;
//   4. every stream is synchronised: fetched values are ready and assigns complete before
//      the next run may overwrite any buffer.
// With profiling on (trace.hpp) step 2 never replays a capture: every kernel, copy and assign
// copy is enqueued alone, its stream synchronised and its time recorded.
//
// Nothing here allocates when every fetch has a tensor and profiling is off: error messages
// are built only on failure (plugin_call with a callable `what`), so the per-step path formats no string.
#include <fmt/format.h>

#include "context.hpp"
#include "exec/compiled.hpp"
#include "log.hpp"
#include "plugin_call.hpp"
#include "tensor.hpp"

namespace dlrt::core::exec {

namespace {}  // namespace

CompiledExecutable::~CompiledExecutable() {
  if (!trace_file.empty()) {
    try {
      write_trace_file(*this, trace_file);
      log(DLRT_LOG_INFO, "exec", "DLRT_TRACE_FILE: wrote {} events to {}", profiler.events().size(),
          trace_file);
    } catch (const Error& e) {  // a destructor cannot fail; say why the file is missing
      log(DLRT_LOG_WARNING, "exec", "DLRT_TRACE_FILE: {}", e.message());
    } catch (...) {
      log(DLRT_LOG_WARNING, "exec", "DLRT_TRACE_FILE: writing {} failed", trace_file);
    }
  }
  release_capture();
  for (Step& s : steps) {
    if (auto* k = std::get_if<KernelStep>(&s); k != nullptr && k->kernel != nullptr)
      plugin_call_noexcept([&] { devices[k->device].api->kernel_destroy(k->kernel); });
    if (auto* c = std::get_if<CopyStep>(&s); c != nullptr && c->transfer.event != nullptr)
      plugin_call_noexcept([&] { devices[c->transfer.src].api->event_destroy(c->transfer.event); });
  }
  for (AssignCopy& a : assign_copies)
    if (a.transfer.event != nullptr)
      plugin_call_noexcept([&] { devices[a.transfer.src].api->event_destroy(a.transfer.event); });
  for (DeviceRes& d : devices) {
    if (d.done != nullptr) plugin_call_noexcept([&] { d.api->event_destroy(d.done); });
    if (d.stream != nullptr) plugin_call_noexcept([&] { d.api->stream_destroy(d.stream); });
  }
  // Device blocks (values, workspaces, constants) are released by their members.
}

void CompiledExecutable::release_capture() noexcept {
  if (captured_ == nullptr) return;
  const dlrt_capture_api* cap = devices[0].api->capture;
  plugin_call_noexcept([&] { cap->graph_destroy(captured_); });
  captured_ = nullptr;
}

void CompiledExecutable::enqueue(Transfer& t) {
  DeviceRes& s = devices[t.src];
  DeviceRes& d = devices[t.dst];
  auto what = [&] { return fmt::format("copy {} -> {}", s.name, d.name); };
  if (t.direct) {
    if (t.src != t.dst) {
      plugin_call(what, [&] { return s.api->event_record(t.event, s.stream); });
      plugin_call(what, [&] { return d.api->stream_wait_event(d.stream, t.event); });
    }
    plugin_call(what, [&] { return d.api->memcpy_d2d(d.handle, t.to, t.from, t.bytes, d.stream); });
    return;
  }
  // Different plugins: no common address space, so through host memory.
  void* host = t.staging.data();
  plugin_call(what, [&] { return s.api->memcpy_d2h(s.handle, host, t.from, t.bytes, s.stream); });
  plugin_call(what, [&] { return s.api->event_record(t.event, s.stream); });
  plugin_call(what, [&] { return s.api->event_synchronize(t.event); });
  plugin_call(what, [&] { return d.api->memcpy_h2d(d.handle, t.to, host, t.bytes, d.stream); });
}

void CompiledExecutable::synchronize(size_t device) {
  DeviceRes& d = devices[device];
  plugin_call([&] { return fmt::format("synchronising {}", d.name); },
              [&] { return d.api->stream_synchronize(d.stream); });
}

// Before the steps (or the replay) read it: the run count, copied to each device's word on
// the device's stream. The staging word is not touched again before this run's closing
// synchronisation, so the asynchronous copy reads the value written here.
void CompiledExecutable::write_rng_offsets() {
  for (DeviceRes& d : devices) {
    if (d.rng_offset.data() == nullptr) continue;
    *static_cast<uint64_t*>(d.rng_staging.data()) = runs_;
    plugin_call([&] { return fmt::format("writing the run count to {}", d.name); },
                [&] {
                  return d.api->memcpy_h2d(d.handle, d.rng_offset.data(), d.rng_staging.data(),
                                           sizeof(uint64_t), d.stream);
                });
  }
}

// Capture (single device, compile.cc): the first call records the steps on the device's
// stream and launches the recording; later calls launch it again. A plugin that declines
// capture_begin with UNIMPLEMENTED (capture off on that instance, plugin.h) gets the steps
// uncaptured, now and in every later run.
void CompiledExecutable::capture_or_run_steps(const dlrt_capture_api* cap) {
  DeviceRes& d = devices[0];
  if (captured_ != nullptr) {
    plugin_call("replaying the captured step",
                [&] { return cap->graph_launch(captured_, d.stream); });
    ++stats_.captured_replays;
    return;
  }
  StatusValue begun;
  try {
    begun = take_status(cap->capture_begin(d.stream));
  } catch (...) {
    fail(DLRT_INTERNAL,
         "capture_begin: the plugin threw an exception (plugins must return a "
         "status)");
  }
  if (begun.code == DLRT_UNIMPLEMENTED) {
    log(DLRT_LOG_DEBUG, "exec", "{} does not capture ({}); running uncaptured", d.name,
        begun.message);
    capture_allowed = false;
    enqueue_steps();
    return;
  }
  if (!begun.ok()) fail(begun, "capture_begin");
  try {
    enqueue_steps();
  } catch (...) {
    dlrt_graph_exec* discard = nullptr;
    plugin_call_noexcept([&] { take_status(cap->capture_end(d.stream, &discard)); });
    if (discard != nullptr) plugin_call_noexcept([&] { cap->graph_destroy(discard); });
    throw;
  }
  // The recorded work has not run yet. If the plugin cannot turn it into a graph (CUDA:
  // cudaStreamEndCapture reports an invalidated capture, or cudaGraphInstantiate fails) or
  // cannot launch the fresh graph, the step is run uncaptured instead, and this executable
  // stops trying: capturing again would fail again, every run.
  StatusValue ended =
      plugin_status("capture_end", [&] { return cap->capture_end(d.stream, &captured_); });
  if (ended.ok()) {
    StatusValue launched =
        plugin_status("graph_launch", [&] { return cap->graph_launch(captured_, d.stream); });
    if (launched.ok()) return;
    release_capture();
    disable_capture(fmt::format("launching the captured step failed: {}", launched.message));
  } else {
    if (captured_ != nullptr) release_capture();  // a plugin that failed yet made a graph
    disable_capture(fmt::format("capture_end failed: {}", ended.message));
  }
  enqueue_steps();
}

// Capture is off for good on this executable; the reason is logged once (a warning: the run
// is correct but slower) and kept for stats().
void CompiledExecutable::disable_capture(std::string reason) {
  log(DLRT_LOG_WARNING, "exec",
      "{}: {}; capture is off for this executable, which runs "
      "uncaptured from now on",
      devices[0].name, reason);
  capture_allowed = false;
  capture_failure = std::move(reason);
}

void CompiledExecutable::enqueue_steps() {
  for (Step& s : steps) {
    if (auto* c = std::get_if<CopyStep>(&s)) {
      enqueue(c->transfer);
      continue;
    }
    auto& k = std::get<KernelStep>(s);
    DeviceRes& d = devices[k.device];
    k.args.rng_offset = runs_;
    plugin_call([&] { return fmt::format("{} on {}: kernel_run", k.name, d.name); },
                [&] { return d.api->kernel_run(k.kernel, d.stream, &k.args); });
  }
}

// The steps one at a time, each timed from before its enqueue to the end of its stream's
// synchronisation (a copy: its destination stream, where it was enqueued; its source's work
// finished with the previous step). The feeds, enqueued before, are waited for first so the
// first step does not carry their time.
void CompiledExecutable::profile_steps() {
  for (size_t d = 0; d < devices.size(); ++d) synchronize(d);
  for (size_t i = 0; i < steps.size(); ++i) {
    const int64_t start = trace_now_ns();
    size_t device = 0;
    if (auto* c = std::get_if<CopyStep>(&steps[i])) {
      enqueue(c->transfer);
      device = c->transfer.dst;
    } else {
      auto& k = std::get<KernelStep>(steps[i]);
      DeviceRes& d = devices[k.device];
      k.args.rng_offset = runs_;
      plugin_call([&] { return fmt::format("{} on {}: kernel_run", k.name, d.name); },
                  [&] { return d.api->kernel_run(k.kernel, d.stream, &k.args); });
      device = k.device;
    }
    synchronize(device);
    profiler.record(uint32_t(i), uint32_t(runs_), start, trace_now_ns());
  }
}

void CompiledExecutable::set_profiling(bool enabled) {
  profiler.set_enabled(enabled, steps.size() + assign_copies.size());
}

namespace {

// The check a caller's tensor must pass against what compile expects.
void check_type(const char* role, const std::string& name, const ops::TensorType& want,
                const dlrt_tensor& t) {
  if (t.type() != want)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("{} '{}': expected a tensor of {}, got {}", role, name,
                                            ops::to_string(want), ops::to_string(t.type())));
}

}  // namespace

void CompiledExecutable::run(const std::vector<const dlrt_tensor*>& in,
                             std::vector<dlrt_tensor*>& out) {
  if (in.size() != feeds.size() || out.size() != fetches.size())
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("run: compiled with {} feeds and {} fetches, got {} and {}", feeds.size(),
                     fetches.size(), in.size(), out.size()));
  Context& ctx = graph_->context();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == nullptr)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("feed {} ('{}') is NULL", i, feeds[i].name));
    check_type("feed", feeds[i].name, feeds[i].type, *in[i]);
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] != nullptr) check_type("fetch", fetches[i].name, fetches[i].type, *out[i]);

  // New fetch tensors are the caller's choice to allocate; make them before counting. (With
  // a tensor for every fetch, `made` stays empty and allocates nothing.)
  std::vector<std::unique_ptr<dlrt_tensor>> made;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] == nullptr) {
      made.resize(out.size());
      made[i] =
          std::make_unique<dlrt_tensor>(ctx, devices[fetches[i].device].registry, fetches[i].type);
    }
  const uint64_t allocs_before = device_allocations();

  // 1. feeds
  for (size_t i = 0; i < in.size(); ++i) {
    FeedSlot& f = feeds[i];
    if (f.to == nullptr) continue;
    DeviceRes& d = devices[f.device];
    const dlrt_tensor& t = *in[i];
    auto what = [&] { return fmt::format("feeding '{}' to {}", f.name, d.name); };
    const size_t src_plugin =
        ctx.registry().physical()[ctx.registry().devices()[t.device()].physical].plugin;
    if (src_plugin == d.plugin) {
      plugin_call(what,
                  [&] { return d.api->memcpy_d2d(d.handle, f.to, t.data(), f.bytes, d.stream); });
    } else {
      t.read(f.staging.data(), f.bytes);  // synchronous d2h on the feed's own device
      plugin_call(what, [&] {
        return d.api->memcpy_h2d(d.handle, f.to, f.staging.data(), f.bytes, d.stream);
      });
    }
  }

  write_rng_offsets();

  // 2. steps (capture: record the second run, replay it from then on; profiling: one by one)
  const bool profiling = profiler.enabled();
  const dlrt_capture_api* cap = capture_allowed ? devices[0].api->capture : nullptr;
  if (profiling) {
    profile_steps();
  } else if (cap != nullptr && (captured_ != nullptr || stats_.runs >= 1)) {
    capture_or_run_steps(cap);
  } else {
    enqueue_steps();
  }

  // 3. fetches, then assigns
  for (size_t i = 0; i < out.size(); ++i) {
    FetchSlot& f = fetches[i];
    dlrt_tensor& t = out[i] != nullptr ? *out[i] : *made[i];
    DeviceRes& d = devices[f.device];
    const size_t dst_plugin =
        ctx.registry().physical()[ctx.registry().devices()[t.device()].physical].plugin;
    auto what = [&] { return fmt::format("fetching '{}' from {}", f.name, d.name); };
    if (dst_plugin == d.plugin)
      plugin_call(what,
                  [&] { return d.api->memcpy_d2d(d.handle, t.data(), f.from, f.bytes, d.stream); });
    else
      plugin_call(what, [&] {
        return d.api->memcpy_d2h(d.handle, f.staging.data(), f.from, f.bytes, d.stream);
      });
  }
  if (devices.size() > 1 && !assign_copies.empty()) {
    // A variable's old value may still be read by a copy on another stream: each stream that
    // writes a variable first waits for every other stream's end of step (on the device when
    // both belong to one plugin, else on the host).
    for (DeviceRes& d : devices)
      plugin_call("end-of-step event", [&] { return d.api->event_record(d.done, d.stream); });
    waited_.assign(devices.size(), 0);  // allocates on the first run only
    for (AssignCopy& a : assign_copies) {
      if (waited_[a.transfer.dst]) continue;
      waited_[a.transfer.dst] = 1;
      DeviceRes& w = devices[a.transfer.dst];
      for (DeviceRes& d : devices) {
        if (&d == &w) continue;
        if (d.plugin == w.plugin)
          plugin_call("assign wait", [&] { return w.api->stream_wait_event(w.stream, d.done); });
        else plugin_call("assign wait", [&] { return d.api->event_synchronize(d.done); });
      }
    }
  }
  for (size_t i = 0; i < assign_copies.size(); ++i) {
    const int64_t start = profiling ? trace_now_ns() : 0;
    enqueue(assign_copies[i].transfer);
    if (!profiling) continue;
    synchronize(assign_copies[i].transfer.dst);
    profiler.record(uint32_t(steps.size() + i), uint32_t(runs_), start, trace_now_ns());
  }

  // 4. completion
  for (size_t d = 0; d < devices.size(); ++d) synchronize(d);
  for (size_t i = 0; i < out.size(); ++i) {
    dlrt_tensor& t = out[i] != nullptr ? *out[i] : *made[i];
    const size_t dst_plugin =
        ctx.registry().physical()[ctx.registry().devices()[t.device()].physical].plugin;
    if (dst_plugin != devices[fetches[i].device].plugin)
      t.write(fetches[i].staging.data(), fetches[i].bytes);
  }
  stats_.run_allocations += device_allocations() - allocs_before;
  ++runs_;
  ++stats_.runs;
  for (size_t i = 0; i < out.size(); ++i)
    if (!made.empty() && made[i] != nullptr) out[i] = made[i].release();
}

}  // namespace dlrt::core::exec
