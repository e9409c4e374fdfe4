// compile.cc: Executable::compile — select, place, initialise variables, plan memory, create
// streams, kernels and copies (executable.hpp). Every allocation and kernel creation of an
// executable happens here, so that run() only enqueues.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>

#include "context.hpp"
#include "exec/compiled.hpp"
#include "exec/memory_plan.hpp"
#include "exec/select.hpp"
#include "graph/variable_store.hpp"
#include "log.hpp"
#include "ops/op_instance.hpp"
#include "ops/op_registry.hpp"
#include "passes/passes.hpp"
#include "plugin_call.hpp"
#include "tensor.hpp"

namespace dlrt::core {

namespace {

using exec::CompiledExecutable;
using exec::DeviceRes;
using exec::Transfer;

// Where one output of one placed node lives: a planned slot of its device's block, or a
// fixed pointer (variable storage, constant block).
struct ValueLoc {
  size_t device = 0;      // local device
  int64_t planned = -1;   // index into that device's lifetimes, or -1
  void* fixed = nullptr;  // when planned < 0
  size_t bytes = 0;
};

const ops::TensorType& type_of_placed(const Graph& g, const PlacedNode& p, uint32_t output) {
  return p.is_copy ? g.type_of({p.source, p.copied_output}) : g.node(p.source).outputs[output];
}

// Ops that draw with the run count (dlrt_kernel_args.rng_offset): the schema's uses_rng flag.
bool draws_random_numbers(const std::string& op) {
  const ops::OpDef* def = ops::find_op(op);
  return def != nullptr && def->uses_rng;
}

class Compiler {
 public:
  Compiler(CompiledExecutable& ex, Graph& g) : ex_(ex), g_(g), ctx_(g.context()) {}

  // `sel`: select_nodes' answer, after the graph passes (over the graph this compiler holds).
  void run(const std::vector<ValueRef>& feeds, const std::vector<ValueRef>& fetches,
           const exec::Selection& sel);

 private:
  size_t local_device(size_t registry);
  void init_variables();
  void choose_in_place(const exec::Selection& sel, const std::vector<ValueRef>& fetches);
  void plan(const exec::Selection& sel, const std::vector<ValueRef>& fetches);
  void* pointer(const ValueLoc& loc) const;
  void* pointer_of(size_t placed, uint32_t output) const { return pointer(locs_[placed][output]); }
  size_t placed_of(NodeId id) const { return original_.at(id); }
  // Where an assign reads its value: placement brings an assigned value to its variable's
  // device (a copy) when it is made elsewhere; that copy, else the producer itself.
  std::pair<size_t, uint32_t> assign_source(const Assign& a) const {
    size_t var_device = ex_.placed_.nodes[placed_of(a.variable)].device;
    size_t pn = placed_of(a.value.node);
    auto it = ex_.placed_.available.find({a.value, var_device});
    if (it == ex_.placed_.available.end() || it->second == pn) return {pn, a.value.output};
    return {it->second, 0};
  }
  Transfer make_transfer(size_t src, size_t dst, const void* from, void* to, size_t bytes);
  void create_kernels();
  void create_rng_offsets(const std::vector<char>& draws_random);
  void build_io(const std::vector<ValueRef>& feeds, const std::vector<ValueRef>& fetches,
                const exec::Selection& sel);

  CompiledExecutable& ex_;
  Graph& g_;
  Context& ctx_;
  std::map<size_t, size_t> local_;     // registry index -> local device
  std::map<NodeId, size_t> original_;  // graph node -> its (non-copy) placed index
  std::vector<std::vector<ValueLoc>> locs_;
  std::vector<std::vector<exec::Lifetime>> lifetimes_;  // per local device
  std::vector<exec::MemoryPlan> plans_;
  // Assigns that run in place: (placed op, output) -> variable node, written straight into
  // the variable's buffer.
  std::map<std::pair<size_t, uint32_t>, NodeId> in_place_;
};

size_t Compiler::local_device(size_t registry) {
  auto it = local_.find(registry);
  if (it != local_.end()) return it->second;
  DeviceRes d;
  d.registry = registry;
  d.plugin = ctx_.registry().physical()[ctx_.registry().devices()[registry].physical].plugin;
  d.name = ctx_.registry().devices()[registry].name;
  std::tie(d.api, d.handle) = ctx_.device_handle(registry);
  plugin_call(fmt::format("creating a stream on {}", d.name),
              [&] { return d.api->stream_create(d.handle, &d.stream); });
  ex_.devices.push_back(std::move(d));
  lifetimes_.emplace_back();
  return local_[registry] = ex_.devices.size() - 1;
}

// Variables keep the device of their first placement for the graph's life; new ones are
// placed where placement put them and initialised there (running their init op).
void Compiler::init_variables() {
  for (const PlacedNode& p : ex_.placed_.nodes) {
    if (p.is_copy || g_.node(p.source).kind != NodeKind::kVariable) continue;
    VariableSlot* slot = g_.variables().find(p.source);
    if (slot == nullptr) slot = &g_.variables().place_and_init(p.source, p.device);
    if (slot->device != p.device)
      fail(DLRT_INTERNAL, fmt::format("variable '{}' lives on {} but was placed on {}", p.name,
                                      ctx_.registry().devices()[slot->device].name,
                                      ctx_.registry().devices()[p.device].name));
  }
}

// An assigned output (n, o) may be written straight into variable V when the op allows
// output o to alias input i (OpDef::in_place), input i is V itself (same device), V is read
// by nothing after n (nor by a copy to another stream, nor fetched: fetches see the value at
// the start of the run) and by no other input of n.
void Compiler::choose_in_place(const exec::Selection& sel, const std::vector<ValueRef>& fetches) {
  const auto& nodes = ex_.placed_.nodes;
  for (const Assign& a : sel.assigns) {
    const Node& op = g_.node(a.value.node);
    if (op.kind != NodeKind::kOp) continue;
    const ops::OpDef* def = ops::find_op(op.op);
    size_t pn = placed_of(a.value.node), pv = placed_of(a.variable);
    bool fetched = std::any_of(fetches.begin(), fetches.end(),
                               [&](ValueRef f) { return f.node == a.variable; });
    if (def == nullptr || fetched || nodes[pn].device != nodes[pv].device) continue;
    for (const ops::InPlace& ip : def->in_place) {
      if (ip.output != int(a.value.output) || size_t(ip.input) >= nodes[pn].inputs.size() ||
          nodes[pn].inputs[ip.input].node != pv)
        continue;
      bool ok = true;
      for (size_t i = 0; i < nodes.size() && ok; ++i)
        for (size_t k = 0; k < nodes[i].inputs.size() && ok; ++k) {
          if (nodes[i].inputs[k].node != pv) continue;
          if (nodes[i].is_copy || i > pn || (i == pn && k != size_t(ip.input))) ok = false;
        }
      if (ok) in_place_[{pn, a.value.output}] = a.variable;
    }
  }
}

void* Compiler::pointer(const ValueLoc& loc) const {
  if (loc.planned < 0) return loc.fixed;
  return static_cast<char*>(ex_.devices[loc.device].values.data()) +
         plans_[loc.device].offsets[loc.planned];
}

// Lifetimes in placed-node positions. A value written at step i and last read at step j
// lives [i, j]; fetched values, assigned values (copied at the end) and values a copy reads
// from another stream live to the end (position N), since those reads are not ordered with
// the producer device's later steps.
void Compiler::plan(const exec::Selection& sel, const std::vector<ValueRef>& fetches) {
  const auto& nodes = ex_.placed_.nodes;
  const size_t end = nodes.size();
  locs_.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const PlacedNode& p = nodes[i];
    const Node& node = g_.node(p.source);
    size_t dev = local_device(p.device);
    size_t nout = p.is_copy ? 1 : node.outputs.size();
    for (uint32_t o = 0; o < nout; ++o) {
      ValueLoc loc;
      loc.device = dev;
      loc.bytes = dense_byte_size(type_of_placed(g_, p, o));
      if (!p.is_copy && node.kind == NodeKind::kVariable) {
        loc.fixed = g_.variables().find(p.source)->buffer.data();
      } else if (!p.is_copy && node.kind == NodeKind::kConstant) {
        DeviceRes& d = ex_.devices[dev];
        d.constants.push_back(exec::allocate_device(ctx_, p.device, loc.bytes, "constant"));
        loc.fixed = d.constants.back().data();
        plugin_call(fmt::format("uploading constant '{}' to {}", p.name, d.name), [&] {
          return d.api->memcpy_h2d(d.handle, loc.fixed, node.constant_data->data(), loc.bytes,
                                   nullptr);
        });
      } else if (auto ip = in_place_.find({i, o}); ip != in_place_.end()) {
        loc.fixed = g_.variables().find(ip->second)->buffer.data();
        ++ex_.in_place_assigns;
      } else {
        // Placeholders are written by the feed copy before step 0.
        size_t first = node.kind == NodeKind::kPlaceholder && !p.is_copy ? 0 : i;
        loc.planned = int64_t(lifetimes_[dev].size());
        lifetimes_[dev].push_back({loc.bytes, first, first});
      }
      locs_[i].push_back(loc);
    }
  }
  auto extend = [&](size_t placed, uint32_t output, size_t until) {
    const ValueLoc& loc = locs_[placed][output];
    if (loc.planned >= 0) {
      auto& lt = lifetimes_[loc.device][loc.planned];
      lt.last = std::max(lt.last, until);
    }
  };
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const PlacedInput& in : nodes[i].inputs)
      extend(in.node, in.output,
             nodes[i].is_copy && nodes[in.node].device != nodes[i].device ? end : i);
  for (ValueRef f : fetches) extend(placed_of(f.node), f.output, end);
  for (const Assign& a : sel.assigns) {
    auto [ps, po] = assign_source(a);
    extend(ps, po, end);
  }

  for (size_t d = 0; d < ex_.devices.size(); ++d) {
    plans_.push_back(exec::plan_memory(lifetimes_[d]));
    ex_.devices[d].values =
        exec::allocate_device(ctx_, ex_.devices[d].registry, plans_[d].total, "executable values");
  }
}

Transfer Compiler::make_transfer(size_t src, size_t dst, const void* from, void* to, size_t bytes) {
  Transfer t;
  t.src = src;
  t.dst = dst;
  t.from = from;
  t.to = to;
  t.bytes = bytes;
  const DeviceRes& s = ex_.devices[src];
  t.direct = s.plugin == ex_.devices[dst].plugin;
  if (!t.direct) t.staging = exec::HostStaging(s.api, s.handle, bytes);
  if (src != dst)
    plugin_call(fmt::format("creating an event on {}", s.name),
                [&] { return s.api->event_create(s.handle, &t.event); });
  return t;
}

// One kernel per op node, created now with the complete descriptor the registry builds
// (the same instantiate() the graph builder used), and one workspace per device sized for
// its largest kernel; kernels of one device run one at a time on its stream, so they can
// share it.
void Compiler::create_kernels() {
  const auto& nodes = ex_.placed_.nodes;
  std::vector<size_t> workspace(ex_.devices.size(), 0);
  std::vector<char> draws_random(ex_.devices.size(), 0);  // per device: runs a random op
  std::vector<std::pair<size_t, size_t>> step_workspace;  // (step index, bytes)
  for (size_t i = 0; i < nodes.size(); ++i) {
    const PlacedNode& p = nodes[i];
    size_t dev = local_.at(p.device);
    if (p.is_copy) {
      const PlacedInput& in = p.inputs.at(0);
      size_t src_dev = locs_[in.node][in.output].device;
      ex_.steps.push_back(exec::CopyStep{i, p.name,
                                         make_transfer(src_dev, dev, pointer_of(in.node, in.output),
                                                       pointer_of(i, 0), locs_[i][0].bytes)});
      continue;
    }
    const Node& node = g_.node(p.source);
    if (node.kind != NodeKind::kOp) continue;
    std::vector<ops::TensorType> in_types;
    for (ValueRef v : node.inputs) in_types.push_back(g_.type_of(v));
    auto inst = ops::instantiate(node.op, in_types, node.attrs);
    if (!inst.ok()) fail(inst.status(), fmt::format("node '{}'", p.name));
    DeviceRes& d = ex_.devices[dev];
    exec::KernelStep k;
    k.device = dev;
    k.placed = i;
    k.name = p.name;
    size_t ws = 0;
    // Inputs that are graph constants on this device: their buffers were filled once above
    // (plan) and are never written again, so the kernel may prepare from them once
    // (dlrt_op_desc.constant_inputs, ABI 1.3).
    dlrt_op_desc desc = inst->desc();
    desc.constant_inputs = 0;
    for (size_t in = 0; in < p.inputs.size() && in < 64; ++in) {
      const PlacedNode& src = nodes[p.inputs[in].node];
      if (!src.is_copy && g_.node(src.source).kind == NodeKind::kConstant)
        desc.constant_inputs |= uint64_t{1} << in;
    }
    plugin_call(fmt::format("{} ({}) on {}: kernel_create", p.name, node.op, d.name),
                [&] { return d.api->kernel_create(d.handle, &desc, &k.kernel, &ws); });
    ++ex_.stats_.kernels;
    workspace[dev] = std::max(workspace[dev], ws);
    draws_random[dev] |= draws_random_numbers(node.op);
    for (const PlacedInput& in : p.inputs) k.inputs.push_back(pointer_of(in.node, in.output));
    for (uint32_t o = 0; o < node.outputs.size(); ++o) k.outputs.push_back(pointer_of(i, o));
    step_workspace.emplace_back(ex_.steps.size(), ws);
    ex_.steps.push_back(std::move(k));
  }
  for (size_t d = 0; d < ex_.devices.size(); ++d)
    ex_.devices[d].workspace =
        exec::allocate_device(ctx_, ex_.devices[d].registry, workspace[d], "kernel workspace");
  create_rng_offsets(draws_random);
  // The argument blocks point into the step's own vectors, which no longer move.
  for (auto [s, ws] : step_workspace) {
    auto& k = std::get<exec::KernelStep>(ex_.steps[s]);
    const DeviceRes& d = ex_.devices[k.device];
    k.args.struct_size = sizeof(dlrt_kernel_args);
    k.args.num_inputs = k.inputs.size();
    k.args.inputs = k.inputs.data();
    k.args.num_outputs = k.outputs.size();
    k.args.outputs = k.outputs.data();
    k.args.workspace = ws > 0 ? d.workspace.data() : nullptr;
    k.args.workspace_bytes = ws;
    k.args.rng_offset_device = static_cast<const uint64_t*>(d.rng_offset.data());  // NULL: none
  }
}

// The run count in device memory (plugin.h, dlrt_kernel_args.rng_offset_device): one 8-byte
// block per device that runs a random op of a plugin built against ABI >= 1.1 (a 1.0 plugin
// would never read it), from the device's arena like every other block, and a host staging
// word each run copies it from. Every kernel of such a device gets the pointer. A device
// without random ops gets none, so its steps (the reference workload's, for one) carry no
// extra copy: the per-run cost is one 8-byte copy per device that needs it.
void Compiler::create_rng_offsets(const std::vector<char>& draws_random) {
  for (size_t i = 0; i < ex_.devices.size(); ++i) {
    DeviceRes& d = ex_.devices[i];
    if (!draws_random[i] || ctx_.plugins().at(d.plugin)->abi_minor < 1) continue;
    d.rng_offset = exec::allocate_device(ctx_, d.registry, sizeof(uint64_t), "rng offset");
    d.rng_staging = exec::HostStaging(d.api, d.handle, sizeof(uint64_t));
  }
}

void Compiler::build_io(const std::vector<ValueRef>& feeds, const std::vector<ValueRef>& fetches,
                        const exec::Selection& sel) {
  for (ValueRef f : feeds) {
    exec::FeedSlot slot;
    slot.name = g_.node(f.node).name;
    slot.type = g_.type_of(f);
    slot.bytes = dense_byte_size(slot.type);
    auto it = original_.find(f.node);
    if (it != original_.end()) {  // a feed the fetches do not need is checked, then ignored
      const ValueLoc& loc = locs_[it->second][0];
      const DeviceRes& d = ex_.devices[loc.device];
      slot.device = loc.device;
      slot.to = pointer(loc);
      slot.staging = exec::HostStaging(d.api, d.handle, slot.bytes);
    }
    ex_.feeds.push_back(std::move(slot));
  }
  for (ValueRef f : fetches) {
    exec::FetchSlot slot;
    const ValueLoc& loc = locs_[placed_of(f.node)][f.output];
    const DeviceRes& d = ex_.devices[loc.device];
    slot.name =
        f.output == 0 ? g_.node(f.node).name : fmt::format("{}:{}", g_.node(f.node).name, f.output);
    slot.device = loc.device;
    slot.from = pointer(loc);
    slot.type = g_.type_of(f);
    slot.bytes = loc.bytes;
    slot.staging = exec::HostStaging(d.api, d.handle, slot.bytes);
    ex_.fetches.push_back(std::move(slot));
  }
  // Assigns that did not run in place copy their value into the variable after the step.
  for (const Assign& a : sel.assigns) {
    size_t pn = placed_of(a.value.node);
    if (in_place_.count({pn, a.value.output})) continue;
    const ValueLoc& to = locs_[placed_of(a.variable)][0];
    auto [ps, po] = assign_source(a);
    const ValueLoc& from = locs_[ps][po];
    ex_.assign_copies.push_back(
        {a.variable, make_transfer(from.device, to.device, pointer(from), pointer(to), to.bytes)});
  }
}

void Compiler::run(const std::vector<ValueRef>& feeds, const std::vector<ValueRef>& fetches,
                   const exec::Selection& sel) {
  PlacementOptions popts;
  popts.soft = ex_.options_.soft_placement;
  popts.auto_device = ex_.options_.auto_device;
  ex_.placed_ = place(g_, sel.nodes, popts);
  for (size_t i = 0; i < ex_.placed_.nodes.size(); ++i)
    if (!ex_.placed_.nodes[i].is_copy) original_[ex_.placed_.nodes[i].source] = i;
  if (ex_.options_.log_device_placement || ctx_.settings().log_device_placement()) {
    // The passes' changes first, at the placement log's verbose level (DLRT_LOG_LEVEL info
    // or debug): what was fused and folded explains the ops the log then lists.
    if (ctx_.settings().log_level() >= DLRT_LOG_INFO)
      for (const std::string& line : ex_.pass_log_) std::cerr << "graph pass " << line << "\n";
    std::cerr << placement_log(g_, ex_.placed_) << std::flush;
  }
  init_variables();
  choose_in_place(sel, fetches);
  plan(sel, fetches);
  create_kernels();
  build_io(feeds, fetches, sel);

  // Capture: one device offering it. A captured step freezes every kernel argument, so its
  // random ops (which draw with the run count) may be captured only where they read the count
  // from device memory, rewritten before each replay: a device of a >= 1.1 plugin
  // (create_rng_offsets). A 1.0 plugin's random ops run uncaptured, their rng_offset set per
  // run. Multi-device capture (one graph per stream, joined by events) is not done.
  bool random = false;
  for (const PlacedNode& p : ex_.placed_.nodes)
    random |= !p.is_copy && draws_random_numbers(g_.node(p.source).op);
  ex_.capture_allowed = ex_.options_.use_capture && ex_.devices.size() == 1 &&
                        ex_.devices[0].api->capture != nullptr &&
                        (!random || ex_.devices[0].rng_offset.data() != nullptr);
  // Assigns across streams wait for every stream's end-of-step event (see run.cc).
  if (ex_.devices.size() > 1)
    for (DeviceRes& d : ex_.devices)
      plugin_call(fmt::format("creating an event on {}", d.name),
                  [&] { return d.api->event_create(d.handle, &d.done); });

  // DLRT_TRACE_FILE: profile every run, write the trace when the executable is destroyed.
  if (const std::string& path = ctx_.settings().value("DLRT_TRACE_FILE"); !path.empty()) {
    ex_.trace_file = exec::next_trace_file(path);
    ex_.set_profiling(true);
  }
}

}  // namespace

std::unique_ptr<Executable> Executable::compile(Graph& graph, const std::vector<ValueRef>& feeds,
                                                const std::vector<ValueRef>& fetches,
                                                const CompileOptions& options) {
  // On any error the half-built executable's destructor releases what was made.
  auto ex = std::make_unique<CompiledExecutable>(graph, options);
  exec::Selection sel = exec::select_nodes(graph, feeds, fetches, options.run_assigns);
  // The graph-pass stage (core/passes): on a copy of the graph, which the executable keeps
  // when a pass changed anything; the caller's graph is never rewritten.
  const passes::PassSet set = passes::PassSet::parse(
      options.graph_passes.empty() ? graph.context().settings().value("DLRT_GRAPH_PASSES")
                                   : options.graph_passes);
  Graph* g = &graph;
  if (set.any()) {
    std::unique_ptr<Graph> work = Graph::derive(graph);
    passes::StageResult r = passes::run_stage(*work, sel.nodes, fetches, sel.assigns, set);
    if (r.changed) {
      sel.nodes = std::move(r.nodes);
      ex->pass_log_ = std::move(r.log);
      ex->rewritten = std::move(work);
      ex->graph_ = g = ex->rewritten.get();
    }
  }
  Compiler(*ex, *g).run(feeds, fetches, sel);
  return ex;
}

}  // namespace dlrt::core
