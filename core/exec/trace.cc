// trace.cc: see trace.hpp.
#include "exec/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <variant>

#include "exec/compiled.hpp"
#include "platform/platform.hpp"
#include "status.hpp"

namespace dlrt::core::exec {

int64_t trace_now_ns() {
  using clock = std::chrono::steady_clock;
  static const clock::time_point origin = clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - origin).count();
}

void Profiler::set_enabled(bool on, size_t events_per_run) {
  enabled_ = on;
  // Room for a few runs up front; vector growth handles the rest (profiling allocates).
  if (on && events_.capacity() < events_.size() + 4 * events_per_run)
    events_.reserve(std::min(kMaxEvents, events_.size() + 4 * events_per_run));
}

void Profiler::record(uint32_t step, uint32_t run, int64_t start_ns, int64_t end_ns) {
  if (events_.size() >= kMaxEvents) {
    ++dropped_;
    return;
  }
  events_.push_back({step, run, start_ns, end_ns - start_ns});
}

namespace {

// What one event shows besides its times: the same for every run of a step.
struct Label {
  std::string name, op, shapes;
  size_t device = 0;  // local device whose stream the event is drawn on
};

std::string join_types(const std::vector<ops::TensorType>& types) {
  std::string s;
  for (const ops::TensorType& t : types) s += (s.empty() ? "" : ", ") + ops::to_string(t);
  return s;
}

std::vector<Label> labels_of(const CompiledExecutable& ex) {
  const Graph& g = ex.graph();
  const PlacedGraph& placed = ex.placed();
  std::vector<Label> labels;
  for (const Step& s : ex.steps) {
    Label l;
    if (const auto* k = std::get_if<KernelStep>(&s)) {
      const Node& node = g.node(placed.nodes[k->placed].source);
      std::vector<ops::TensorType> in;
      for (ValueRef v : node.inputs) in.push_back(g.type_of(v));
      l = {k->name, node.op, join_types(in) + " -> " + join_types(node.outputs), k->device};
    } else {
      const auto& c = std::get<CopyStep>(s);
      const PlacedNode& p = placed.nodes[c.placed];
      const std::string t = ops::to_string(g.type_of({p.source, p.copied_output}));
      l = {c.name, "copy", t + " -> " + t, c.transfer.dst};
    }
    labels.push_back(std::move(l));
  }
  for (const AssignCopy& a : ex.assign_copies) {
    const Node& var = g.node(a.variable);
    const std::string t = ops::to_string(var.outputs[0]);
    labels.push_back({var.name, "assign", t + " -> " + t, a.transfer.dst});
  }
  return labels;
}

}  // namespace

std::string trace_json(const CompiledExecutable& ex) {
  using nlohmann::json;
  json events = json::array();
  const auto& recorded = ex.profiler.events();
  if (!recorded.empty()) {
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", 0},
                      {"args", {{"name", "dlrt executable"}}}});
    for (size_t d = 0; d < ex.devices.size(); ++d) {
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", 1},
                        {"tid", d + 1},
                        {"args", {{"name", ex.devices[d].name + " stream"}}}});
      events.push_back({{"name", "thread_sort_index"},
                        {"ph", "M"},
                        {"pid", 1},
                        {"tid", d + 1},
                        {"args", {{"sort_index", d}}}});
    }
  }
  const std::vector<Label> labels = labels_of(ex);
  for (const TraceEvent& e : recorded) {
    const Label& l = labels.at(e.step);
    events.push_back({{"name", l.name},
                      {"cat", l.op},
                      {"ph", "X"},
                      {"ts", double(e.start_ns) / 1000.0},
                      {"dur", double(e.dur_ns) / 1000.0},
                      {"pid", 1},
                      {"tid", l.device + 1},
                      {"args",
                       {{"op", l.op},
                        {"device", ex.devices[l.device].name},
                        {"shapes", l.shapes},
                        {"run", e.run}}}});
  }
  json doc = {
      {"traceEvents", std::move(events)},
      {"displayTimeUnit", "ms"},
      {"otherData",
       {{"producer", "dlrt executor profiler"}, {"dropped_events", ex.profiler.dropped()}}}};
  return doc.dump();
}

void write_trace_file(const CompiledExecutable& ex, const std::string& path) {
  if (path.empty()) fail(DLRT_INVALID_ARGUMENT, "writing a trace: the path is empty");
  const std::string text = trace_json(ex);
  const std::string tmp = fmt::format("{}.tmp.{}", path, platform::process_id());
  auto error = [&](const char* doing, int err) {
    dlrt_code code = err == ENOENT || err == ENOTDIR ? DLRT_NOT_FOUND
                     : err == EACCES || err == EPERM ? DLRT_PERMISSION_DENIED
                                                     : DLRT_UNAVAILABLE;
    fail(code, fmt::format("writing the trace to '{}': {} '{}' failed: {}", path, doing, tmp,
                           std::strerror(err)));
  };
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) error("creating", errno);
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int write_err = errno;
  if (std::fclose(f) != 0 || !written) {
    const int err = written ? errno : write_err;
    std::remove(tmp.c_str());
    error("writing", err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail(err == EACCES || err == EPERM ? DLRT_PERMISSION_DENIED : DLRT_UNAVAILABLE,
         fmt::format("writing the trace to '{}': renaming '{}' over it failed: {}", path, tmp,
                     std::strerror(err)));
  }
}

std::string next_trace_file(const std::string& setting) {
  static std::atomic<uint64_t> count{0};
  const uint64_t n = count.fetch_add(1);
  if (n == 0) return setting;
  // The extension is the part after the last '.' of the last path component.
  const size_t slash = setting.rfind('/');
  const size_t dot = setting.rfind('.');
  const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  if (!has_ext) return fmt::format("{}.{}", setting, n);
  return fmt::format("{}.{}{}", setting.substr(0, dot), n, setting.substr(dot));
}

}  // namespace dlrt::core::exec
