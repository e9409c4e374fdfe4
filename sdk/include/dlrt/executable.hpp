// dlrt/executable.hpp: what Graph::compile takes and makes. CompileOptions (dlrt_compile_options,
// an unset field takes the context's setting), NodePlacement (where one node runs) and
// Executable, the compiled subgraph: placed, memory planned, kernels created, run with Tensors.
#ifndef DLRT_EXECUTABLE_HPP_
#define DLRT_EXECUTABLE_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dlrt/error.hpp"
#include "dlrt/tensor.hpp"

namespace dlrt {

// Options of Graph::compile; an unset field takes the context's setting (dlrt_compile_options).
struct CompileOptions {
  std::optional<bool> soft_placement;        // false: strict placement
  std::optional<bool> log_device_placement;  // print TensorFlow's placement log at compile
  std::optional<bool> use_capture;           // replay a captured step where devices offer it
  // true: every assign of the graph runs at the end of each run (a training step); false or
  // unset: none (evaluation, prediction).
  std::optional<bool> run_assigns;
  // true: "auto" placement, one device for every unrequested op, chosen by how many of the
  // executable's ops it runs (dlrt_compile_options.auto_device); Executable::auto_device()
  // says what was picked.
  std::optional<bool> auto_device;
  // The graph passes (dlrt_compile_options.graph_passes): "" = the context's setting, else
  // every pass; "none"; "default,-fold_constants"; ... Executable::pass_log() says what they did.
  std::string graph_passes;

  // Chainable setters: g.compile(feeds, fetches, CompileOptions().with_run_assigns(true)).
  CompileOptions& with_run_assigns(bool on) {
    run_assigns = on;
    return *this;
  }
  CompileOptions& with_graph_passes(std::string passes) {
    graph_passes = std::move(passes);
    return *this;
  }

  dlrt_compile_options c() const {
    dlrt_compile_options o;
    dlrt_compile_options_init(&o);
    if (soft_placement) o.soft_placement = *soft_placement ? 1 : 0;
    if (log_device_placement) o.log_device_placement = *log_device_placement ? 1 : 0;
    if (use_capture) o.use_capture = *use_capture ? 1 : 0;
    if (run_assigns) o.run_assigns = *run_assigns ? 1 : 0;
    if (auto_device) o.auto_device = *auto_device ? 1 : 0;
    // Points into this object: valid while it lives (compile copies it during the call).
    if (!graph_passes.empty()) o.graph_passes = graph_passes.c_str();
    return o;
  }
};

// Where one node of an executable runs (dlrt_node_placement, copied out).
struct NodePlacement {
  std::string name, op, requested, assigned, reason, detail;
};

// A compiled subgraph (dlrt_executable): placed, memory planned, kernels created. Move-only;
// destroy it before its Graph. Running it allocates nothing when every fetch has a tensor.
class Executable {
 public:
  Executable() = default;
  explicit Executable(dlrt_executable* adopted) noexcept : handle_(adopted) {}
  Executable(Executable&&) noexcept = default;
  Executable& operator=(Executable&&) noexcept = default;
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  dlrt_executable* get() const noexcept { return handle_.get(); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  // `feeds` in the order given to compile. `fetches` has one Tensor per fetch: a tensor that
  // holds one is written (its desc must match); an empty one receives a new tensor.
  void run(const std::vector<const Tensor*>& feeds, std::vector<Tensor>& fetches) {
    std::vector<const dlrt_tensor*> in;
    for (const Tensor* t : feeds) in.push_back(t != nullptr ? t->get() : nullptr);
    std::vector<dlrt_tensor*> out;
    for (Tensor& t : fetches) out.push_back(t.get());
    const bool had_all = [&] {
      for (dlrt_tensor* t : out)
        if (t == nullptr) return false;
      return true;
    }();
    check(dlrt_executable_run(get(), in.empty() ? nullptr : in.data(), in.size(),
                              out.empty() ? nullptr : out.data(), out.size()));
    if (!had_all)
      for (size_t i = 0; i < out.size(); ++i)
        if (!fetches[i]) fetches[i] = Tensor(out[i]);
  }
  // The same, with a new tensor for every fetch.
  std::vector<Tensor> run(const std::vector<const Tensor*>& feeds, size_t num_fetches) {
    std::vector<Tensor> out(num_fetches);
    run(feeds, out);
    return out;
  }

  size_t node_count() const { return dlrt_executable_node_count(get()); }
  NodePlacement node_placement(size_t index) const {
    dlrt_node_placement c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_node_placement);
    check(dlrt_executable_node_placement(get(), index, &c));
    return {detail::str(c.name),     detail::str(c.op),     detail::str(c.requested),
            detail::str(c.assigned), detail::str(c.reason), detail::str(c.detail)};
  }
  // What the graph passes changed, one line per change ("" when nothing).
  std::string pass_log() const {
    size_t n = 0;
    check(dlrt_executable_pass_log(get(), nullptr, 0, &n));
    std::string text(n + 1, '\0');
    check(dlrt_executable_pass_log(get(), &text[0], text.size(), &n));
    text.resize(n);
    return text;
  }
  // With CompileOptions::auto_device: what compile picked and why; "" otherwise.
  std::string auto_device() const {
    size_t n = 0;
    check(dlrt_executable_auto_device(get(), nullptr, 0, &n));
    std::string text(n + 1, '\0');
    check(dlrt_executable_auto_device(get(), &text[0], text.size(), &n));
    text.resize(n);
    return text;
  }
  // DLRT_DUMP_LOG, DLRT_DUMP_JSON or DLRT_DUMP_DOT.
  std::string dump(dlrt_dump_format format) const {
    size_t n = 0;
    check(dlrt_executable_dump(get(), format, nullptr, 0, &n));
    std::string text(n + 1, '\0');
    check(dlrt_executable_dump(get(), format, &text[0], text.size(), &n));
    text.resize(n);
    return text;
  }

  // Profiling (dlrt_executable_set_profiling): later runs time every node, synchronising
  // after each; write_trace writes Chrome trace-event JSON (opens in Perfetto).
  void set_profiling(bool enabled) { check(dlrt_executable_set_profiling(get(), enabled ? 1 : 0)); }
  // The run count the next run starts from (random ops draw with it; dlrt_executable_set_run_count).
  void set_run_count(uint64_t next_run) { check(dlrt_executable_set_run_count(get(), next_run)); }
  // Kernels per run, runs, captured replays, allocations by runs (dlrt_executable_run_stats).
  dlrt_run_stats run_stats() const {
    dlrt_run_stats c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_run_stats);
    check(dlrt_executable_run_stats(get(), &c));
    return c;
  }
  void write_trace(const std::string& path) const {
    check(dlrt_executable_write_trace(get(), path.c_str()));
  }

 private:
  detail::Owner<dlrt_executable> handle_;
};

}  // namespace dlrt

#endif  // DLRT_EXECUTABLE_HPP_
