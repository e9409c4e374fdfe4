// c_api_exec.cc: compiling, running and profiling graphs (dlrt_graph_compile,
// dlrt_executable_*) and dlrt_compile_options_init. Thin shells over core/exec, as in c_api.cc: NULL checks, the
// caller's options read through the ABI rules (nothing past struct_size), exceptions turned
// into statuses, out-parameters reset on entry.
#include <dlrt/dlrt.h>

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "c_api_util.hpp"
#include "passes/passes.hpp"
#include "context.hpp"
#include "exec/executable.hpp"
#include "graph/graph_handle.hpp"
#include "status.hpp"

// The opaque handle: the executable plus the strings dlrt_executable_node_placement hands
// out (built on first request, owned here, valid until destroy).
struct dlrt_executable {
  std::unique_ptr<dlrt::core::Executable> impl;
  struct Strings {
    std::string op, requested, assigned, reason;
  };
  std::vector<Strings> strings;
};

using dlrt::core::fail;
using dlrt::core::guarded;
using dlrt::core::require;

namespace {

dlrt::core::CompileOptions resolve_options(const dlrt::core::Context& ctx,
                                           const dlrt_compile_options* c) {
  dlrt_compile_options o;
  dlrt_compile_options_init(&o);
  if (c != nullptr) {
    if (c->struct_size < sizeof(size_t))
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("dlrt_graph_compile: options->struct_size is {}; set it with "
                       "dlrt_compile_options_init",
                       c->struct_size));
    size_t n = c->struct_size < sizeof(o) ? c->struct_size : sizeof(o);
    std::memcpy(reinterpret_cast<char*>(&o) + sizeof(size_t),
                reinterpret_cast<const char*>(c) + sizeof(size_t), n - sizeof(size_t));
  }
  dlrt::core::CompileOptions out;
  out.soft_placement =
      o.soft_placement < 0 ? ctx.settings().soft_placement() : o.soft_placement != 0;
  out.log_device_placement = o.log_device_placement < 0 ? ctx.settings().log_device_placement()
                                                        : o.log_device_placement != 0;
  out.use_capture = o.use_capture != 0;
  if (o.run_assigns < -1 || o.run_assigns > 1)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("dlrt_graph_compile: options->run_assigns is {}; expected 0 (no assigns: "
                     "evaluation, prediction), 1 (every assign: a training step) or -1 (default, "
                     "0)",
                     o.run_assigns));
  out.run_assigns = o.run_assigns == 1;
  if (o.auto_device < -1 || o.auto_device > 1)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("dlrt_graph_compile: options->auto_device is {}; expected 1 (one device "
                     "chosen by the ops it runs), 0 (each op by priority) or -1 (default, 0)",
                     o.auto_device));
  out.auto_device = o.auto_device == 1;
  if (o.graph_passes != nullptr) {
    out.graph_passes = o.graph_passes;
    dlrt::core::passes::PassSet::parse(out.graph_passes);  // INVALID_ARGUMENT now, naming it
  }
  return out;
}

// The text-out convention of dlrt_executable_dump: the full length in *out_length, as much as
// fits (NUL-terminated) in buf.
void copy_text(const std::string& text, char* buf, size_t buf_size, size_t* out_length) {
  *out_length = text.size();
  if (buf != nullptr && buf_size > 0) {
    const size_t n = text.size() < buf_size - 1 ? text.size() : buf_size - 1;
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
}

std::vector<dlrt::core::ValueRef> values_from_c(const dlrt_value* v, size_t n, const char* what) {
  if (n > 0) require(v, what);
  std::vector<dlrt::core::ValueRef> out;
  for (size_t i = 0; i < n; ++i) out.push_back(dlrt::core::from_c(v[i]));
  return out;
}

const char* node_op_name(const dlrt::core::Graph& g, const dlrt::core::PlacedNode& p) {
  using dlrt::core::NodeKind;
  if (p.is_copy) return "copy";
  const dlrt::core::Node& n = g.node(p.source);
  switch (n.kind) {
    case NodeKind::kPlaceholder:
      return "placeholder";
    case NodeKind::kConstant:
      return "constant";
    case NodeKind::kVariable:
      return "variable";
    case NodeKind::kOp:
      break;
  }
  return nullptr;  // an op: its name is in the graph node
}

}  // namespace

extern "C" {

DLRT_API void dlrt_compile_options_init(dlrt_compile_options* options) {
  if (options == nullptr) return;
  *options = dlrt_compile_options{};
  options->struct_size = sizeof(dlrt_compile_options);
  options->soft_placement = -1;
  options->log_device_placement = -1;
  options->use_capture = -1;
  options->run_assigns = -1;
  options->auto_device = -1;
}

DLRT_API dlrt_status* dlrt_graph_compile(dlrt_graph* graph, const dlrt_value* feeds,
                                         size_t num_feeds, const dlrt_value* fetches,
                                         size_t num_fetches, const dlrt_compile_options* options,
                                         dlrt_executable** out_executable) {
  if (out_executable != nullptr) *out_executable = nullptr;
  return guarded([&] {
    require(out_executable, "dlrt_graph_compile: out_executable");
    require(graph, "dlrt_graph_compile: graph");
    auto ex = std::make_unique<dlrt_executable>();
    ex->impl = dlrt::core::Executable::compile(
        *graph, values_from_c(feeds, num_feeds, "dlrt_graph_compile: feeds"),
        values_from_c(fetches, num_fetches, "dlrt_graph_compile: fetches"),
        resolve_options(graph->context(), options));
    *out_executable = ex.release();
  });
}

DLRT_API void dlrt_executable_destroy(dlrt_executable* executable) { delete executable; }

DLRT_API dlrt_status* dlrt_executable_run(dlrt_executable* executable,
                                          const dlrt_tensor* const* feeds, size_t num_feeds,
                                          dlrt_tensor** fetches, size_t num_fetches) {
  return guarded([&] {
    require(executable, "dlrt_executable_run: executable");
    if (num_feeds > 0) require(feeds, "dlrt_executable_run: feeds");
    if (num_fetches > 0) require(fetches, "dlrt_executable_run: fetches");
    std::vector<const dlrt_tensor*> in(feeds, feeds + num_feeds);
    std::vector<dlrt_tensor*> out(fetches, fetches + num_fetches);
    executable->impl->run(in, out);
    for (size_t i = 0; i < num_fetches; ++i) fetches[i] = out[i];
  });
}

DLRT_API dlrt_status* dlrt_executable_set_profiling(dlrt_executable* executable, int32_t enabled) {
  return guarded([&] {
    require(executable, "dlrt_executable_set_profiling: executable");
    executable->impl->set_profiling(enabled != 0);
  });
}

DLRT_API dlrt_status* dlrt_executable_set_run_count(dlrt_executable* executable,
                                                    uint64_t next_run) {
  return guarded([&] {
    require(executable, "dlrt_executable_set_run_count: executable");
    executable->impl->set_run_count(next_run);
  });
}

DLRT_API dlrt_status* dlrt_executable_run_stats(const dlrt_executable* executable,
                                                dlrt_run_stats* out) {
  return guarded([&] {
    require(executable, "dlrt_executable_run_stats: executable");
    require(out, "dlrt_executable_run_stats: out");
    const dlrt::core::Executable::Stats s = executable->impl->stats();
    dlrt_run_stats full{};
    full.struct_size = sizeof(full);
    full.kernels = s.kernels;
    full.runs = s.runs;
    full.captured_replays = s.captured_replays;
    full.run_allocations = s.run_allocations;
    dlrt::core::write_out(out, full, "dlrt_executable_run_stats: out");
  });
}

DLRT_API dlrt_status* dlrt_executable_write_trace(const dlrt_executable* executable,
                                                  const char* path) {
  return guarded([&] {
    require(executable, "dlrt_executable_write_trace: executable");
    require(path, "dlrt_executable_write_trace: path");
    executable->impl->write_trace(path);
  });
}

DLRT_API size_t dlrt_executable_node_count(const dlrt_executable* executable) {
  return executable != nullptr ? executable->impl->placed().nodes.size() : 0;
}

DLRT_API dlrt_status* dlrt_executable_node_placement(const dlrt_executable* executable,
                                                     size_t index, dlrt_node_placement* out) {
  return guarded([&] {
    require(executable, "dlrt_executable_node_placement: executable");
    require(out, "dlrt_executable_node_placement: out");
    const dlrt::core::PlacedGraph& placed = executable->impl->placed();
    const dlrt::core::Graph& g = executable->impl->graph();
    if (index >= placed.nodes.size())
      fail(DLRT_OUT_OF_RANGE, fmt::format("dlrt_executable_node_placement: index {} >= node "
                                          "count {}",
                                          index, placed.nodes.size()));
    auto& strings = const_cast<dlrt_executable*>(executable)->strings;
    if (strings.empty()) {
      for (const dlrt::core::PlacedNode& p : placed.nodes) {
        const dlrt::core::Node& n = g.node(p.source);
        const char* kind = node_op_name(g, p);
        strings.push_back({kind != nullptr ? kind : n.op, p.is_copy ? "" : n.requested_device,
                           g.context().registry().devices()[p.device].full_name,
                           dlrt::core::reason_name(p.reason)});
      }
    }
    const dlrt::core::PlacedNode& p = placed.nodes[index];
    dlrt_node_placement full{};
    full.struct_size = sizeof(full);
    full.name = p.name.c_str();
    full.op = strings[index].op.c_str();
    full.requested = strings[index].requested.c_str();
    full.assigned = strings[index].assigned.c_str();
    full.reason = strings[index].reason.c_str();
    full.detail = p.detail.c_str();
    dlrt::core::write_out(out, full, "dlrt_executable_node_placement: out");
  });
}

DLRT_API dlrt_status* dlrt_executable_dump(const dlrt_executable* executable, int32_t format,
                                           char* buf, size_t buf_size, size_t* out_length) {
  if (out_length != nullptr) *out_length = 0;
  return guarded([&] {
    require(executable, "dlrt_executable_dump: executable");
    require(out_length, "dlrt_executable_dump: out_length");
    const auto& g = executable->impl->graph();
    const auto& placed = executable->impl->placed();
    std::string text;
    switch (format) {
      case DLRT_DUMP_LOG:
        text = dlrt::core::placement_log(g, placed);
        break;
      case DLRT_DUMP_JSON:
        text = dlrt::core::placement_json(g, placed);
        break;
      case DLRT_DUMP_DOT:
        text = dlrt::core::placement_dot(g, placed);
        break;
      default:
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("dlrt_executable_dump: format {} is not one of DLRT_DUMP_LOG (0), "
                         "DLRT_DUMP_JSON (1), DLRT_DUMP_DOT (2)",
                         format));
    }
    *out_length = text.size();
    if (buf != nullptr && buf_size > 0) {
      size_t n = text.size() < buf_size - 1 ? text.size() : buf_size - 1;
      std::memcpy(buf, text.data(), n);
      buf[n] = '\0';
    }
  });
}

DLRT_API dlrt_status* dlrt_executable_auto_device(const dlrt_executable* executable, char* buf,
                                                  size_t buf_size, size_t* out_length) {
  if (out_length != nullptr) *out_length = 0;
  return guarded([&] {
    require(executable, "dlrt_executable_auto_device: executable");
    require(out_length, "dlrt_executable_auto_device: out_length");
    copy_text(executable->impl->placed().auto_device, buf, buf_size, out_length);
  });
}

DLRT_API dlrt_status* dlrt_executable_pass_log(const dlrt_executable* executable, char* buf,
                                               size_t buf_size, size_t* out_length) {
  if (out_length != nullptr) *out_length = 0;
  return guarded([&] {
    require(executable, "dlrt_executable_pass_log: executable");
    require(out_length, "dlrt_executable_pass_log: out_length");
    std::string text;
    for (const std::string& line : executable->impl->pass_log())
      text += (text.empty() ? "" : "\n") + line;
    copy_text(text, buf, buf_size, out_length);
  });
}

}  // extern "C"
