// placement.cc: the placement engine (rules and their order in placement.hpp; the same rules
// with examples in docs/placement.md).
//
// Passes, each over the nodes of `needed` in topological order:
//   1. groups     union-find over colocation: explicit colocate() groups, and optimizer
//                 updates (ops with in-place outputs) with the variables they update in place
//                 (param and slots), and an assigned value's producer with its variable when
//                 that producer reads the variable;
//   2. resolve    each group gets one device: a variable placed by an earlier compile pins it;
//                 else the members' merged request; else the best device running every
//                 member. Unrequested placeholders/constants alone in their group "float";
//   3. follow     an unconstrained op whose placed inputs all sit on one device moves there
//                 when that device runs it (no copy needed);
//   4. float      a floating placeholder/constant goes to its first consumer's device;
//   5. copies     (copies.cc) PlacedGraph in topological order, a copy before the first
//                 consumer that needs a value on another device, reused by later consumers.
#include "placement/placement.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "graph/variable_store.hpp"
#include "ops/op_registry.hpp"
#include "placement/auto_device.hpp"
#include "placement/copies.hpp"
#include "placement/support.hpp"
#include "status.hpp"

namespace dlrt::core {
namespace {

using placement::op_type;
using placement::SupportOracle;

constexpr size_t kUnplaced = static_cast<size_t>(-1);

bool matches(const DeviceSpec& spec, const LogicalDevice& dev) {
  return spec.is_local() && (spec.type.empty() || spec.type == dev.type) &&
         (spec.index < 0 || spec.index == dev.index);
}

// TensorFlow's merge of two requests in one colocation group: "/GPU" and "/GPU:1" give
// "/GPU:1"; "/GPU:0" and "/CPU:0" conflict (nullopt).
std::optional<DeviceSpec> merge(DeviceSpec a, const DeviceSpec& b) {
  if (!b.type.empty()) {
    if (!a.type.empty() && a.type != b.type) return std::nullopt;
    a.type = b.type;
  }
  if (b.index >= 0) {
    if (a.index >= 0 && a.index != b.index) return std::nullopt;
    a.index = b.index;
  }
  return a;
}

class Placer {
 public:
  Placer(Graph& graph, const std::vector<NodeId>& needed, const PlacementOptions& options)
      : graph_(graph),
        needed_(needed),
        options_(options),
        oracle_(graph),
        devices_(graph.context().registry().devices()) {
    const size_t n = graph.nodes().size();
    in_needed_.assign(n, false);
    device_.assign(n, kUnplaced);
    reason_.assign(n, PlacementReason::kDefaultPriority);
    detail_.assign(n, "");
    parent_.resize(n);
    std::iota(parent_.begin(), parent_.end(), NodeId{0});
  }

  PlacedGraph run() {
    check_needed();
    if (devices_.empty())
      fail(DLRT_FAILED_PRECONDITION,
           fmt::format("cannot place {} nodes: the context has no devices (see "
                       "dlrt_context_plugin_info for why each plugin offers none)",
                       needed_.size()));
    if (options_.auto_device) auto_ = placement::choose_auto_device(graph_, oracle_, needed_);
    build_groups();
    for (const std::vector<NodeId>& members : groups()) resolve(members);
    follow_inputs();
    place_floating();
    PlacedGraph placed = build_placed();
    if (auto_) placed.auto_device = auto_->summary;
    return placed;
  }

 private:
  const Node& node(NodeId id) const { return graph_.node(id); }
  std::string who(NodeId id) const {
    return fmt::format("{} ({})", node(id).name, op_type(node(id)));
  }
  const std::string& full(size_t d) const { return devices_[d].full_name; }
  // The request as the user wrote it ("/GPU:0"), or formatted when only the parsed one is set.
  std::string spec_text(NodeId id) const {
    const Node& n = node(id);
    return n.requested_device.empty() ? format_device_spec(*n.requested) : n.requested_device;
  }
  std::optional<DeviceSpec> request(NodeId id) const {
    const Node& n = node(id);
    if (n.requested) return n.requested;
    if (!n.requested_device.empty()) return parse_device_spec(n.requested_device);
    return std::nullopt;
  }
  std::string names(const std::vector<size_t>& ds) const {
    if (ds.empty()) return "none";
    std::vector<std::string> out;
    for (size_t d : ds) out.push_back(devices_[d].name);
    return fmt::format("{}", fmt::join(out, ", "));
  }

  void set(NodeId id, size_t d, PlacementReason r, std::string detail = "") {
    device_[id] = d;
    reason_[id] = r;
    detail_[id] = std::move(detail);
  }

  // `needed` must name each node once, in topological order, with every input before its
  // consumer: the executor computes it, so a violation is our bug, hence INTERNAL.
  void check_needed() {
    for (NodeId id : needed_) {
      if (id >= in_needed_.size())
        fail(DLRT_INTERNAL, fmt::format("placement: node id {} is not in the graph ({} nodes)", id,
                                        in_needed_.size()));
      if (in_needed_[id]) fail(DLRT_INTERNAL, fmt::format("placement: node {} listed twice", id));
      for (ValueRef v : node(id).inputs)
        if (v.node >= in_needed_.size() || !in_needed_[v.node])
          fail(DLRT_INTERNAL, fmt::format("placement: input {} of {} is not placed before it",
                                          v.node, node(id).name));
      in_needed_[id] = true;
    }
  }

  NodeId find(NodeId x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(NodeId a, NodeId b) {
    a = find(a);
    b = find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);  // root = earliest member
  }

  void build_groups() {
    std::map<uint32_t, NodeId> explicit_groups;
    for (NodeId id : needed_) {
      const Node& n = node(id);
      if (n.colocation_group) {
        auto [it, fresh] = explicit_groups.emplace(*n.colocation_group, id);
        if (!fresh) unite(it->second, id);
      }
      // An optimizer update lives with the variables it updates in place (param, slots).
      const ops::OpDef* def = n.kind == NodeKind::kOp ? ops::find_op(n.op) : nullptr;
      if (def != nullptr)
        for (const ops::InPlace& p : def->in_place) {
          ValueRef in = n.inputs.at(p.input);
          if (node(in.node).kind == NodeKind::kVariable) unite(id, in.node);
        }
    }
    // "After each run, v holds value": when value's producer reads v, it is v's update.
    for (const Assign& a : graph_.assigns()) {
      if (!in_needed_[a.variable] || !in_needed_[a.value.node]) continue;
      for (ValueRef in : node(a.value.node).inputs)
        if (in.node == a.variable) unite(a.variable, a.value.node);
    }
  }

  // Groups as member lists, ordered by their first member (topological).
  std::vector<std::vector<NodeId>> groups() {
    std::map<NodeId, std::vector<NodeId>> by_root;
    for (NodeId id : needed_) by_root[find(id)].push_back(id);
    std::vector<std::vector<NodeId>> out;
    for (auto& [root, members] : by_root) out.push_back(std::move(members));
    return out;
  }

  bool runs_all(const std::vector<NodeId>& members, size_t d) {
    for (NodeId m : members)
      if (!oracle_.supports(m, d)) return false;
    return true;
  }
  // Devices automatic placement may pick that run every member, in priority order.
  std::vector<size_t> capable_all(const std::vector<NodeId>& members) {
    std::vector<size_t> out;
    for (size_t d : oracle_.automatic())
      if (runs_all(members, d)) out.push_back(d);
    return out;
  }
  // Why no device runs every member: per device, the first member it cannot run, or (for the
  // oracle that runs them all) why automatic placement may not pick it and how to ask for it.
  [[noreturn]] void fail_no_device(const std::vector<NodeId>& members) {
    std::vector<std::string> why;
    for (size_t d : oracle_.by_priority()) {
      if (!oracle_.is_automatic(d) && runs_all(members, d)) {
        why.push_back(
            fmt::format("{}: {}", oracle_.short_name(d), graph_.context().why_not_automatic(d)));
        continue;
      }
      for (NodeId m : members)
        if (!oracle_.supports(m, d)) {
          why.push_back(members.size() == 1
                            ? oracle_.why_not(m, d)
                            : fmt::format("{} for {}", oracle_.why_not(m, d), who(m)));
          break;
        }
    }
    if (members.size() == 1)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("no device can run {}: {}", who(members[0]), fmt::join(why, "; ")));
    std::vector<std::string> ws;
    for (NodeId m : members) ws.push_back(node(m).name);
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("no device can run every member of the colocation group {{{}}}: {}",
                     fmt::join(ws, ", "), fmt::join(why, "; ")));
  }

  void resolve(std::vector<NodeId> members) {
    const NodeId anchor = members[0];
    // 1. A variable placed by an earlier compile keeps its device and takes its group along.
    std::optional<NodeId> pinned_by;
    for (NodeId m : members) {
      if (node(m).kind != NodeKind::kVariable) continue;
      VariableSlot* slot = graph_.variables().find(m);
      if (slot == nullptr) continue;
      if (pinned_by && device_[*pinned_by] != slot->device)
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("variables {} and {} are colocated but earlier compiles placed them on "
                         "{} and {}",
                         node(*pinned_by).name, node(m).name, full(device_[*pinned_by]),
                         full(slot->device)));
      set(m, slot->device, PlacementReason::kVariableStore, "placed by an earlier compile");
      pinned_by = m;
    }
    // 2. The members' requests, merged; two that cannot both hold are the user's error.
    std::optional<DeviceSpec> req;
    std::optional<NodeId> req_by;
    for (NodeId m : members) {
      std::optional<DeviceSpec> r = request(m);
      if (!r) continue;
      if (!req) {
        req = r;
        req_by = m;
        continue;
      }
      std::optional<DeviceSpec> merged = merge(*req, *r);
      if (!merged)
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("{} requests {} and {} requests {}, but they are colocated and must "
                         "share a device",
                         who(*req_by), spec_text(*req_by), who(m), spec_text(m)));
      req = merged;
    }

    const NodeKind k = node(anchor).kind;
    if (members.size() == 1 && !req && !pinned_by &&
        (k == NodeKind::kPlaceholder || k == NodeKind::kConstant)) {
      floating_.push_back(anchor);  // goes where its first consumer goes (pass 4)
      return;
    }

    if (pinned_by) return resolve_pinned(members, *pinned_by);

    size_t chosen = kUnplaced;
    std::string problem;  // "" = the request holds
    PlacementReason fallback = PlacementReason::kFallbackNoKernel;
    if (req) {
      std::vector<size_t> matching;
      for (size_t d : oracle_.by_priority())
        if (matches(*req, devices_[d])) matching.push_back(d);
      for (size_t d : matching)
        if (runs_all(members, d)) {
          chosen = d;
          break;
        }
      if (matching.empty()) {
        // The plugins' reasons say why it may be missing: "plugin cuda has no devices: ...".
        fallback = PlacementReason::kFallbackDeviceMissing;
        const std::string why = graph_.context().why_devices_missing();
        problem = fmt::format("requested {} but no visible device matches it (visible: {}{}{})",
                              spec_text(*req_by), graph_.context().registry().names(),
                              why.empty() ? "" : "; ", why);
      } else if (chosen == kUnplaced) {
        std::vector<std::string> why;
        for (size_t d : matching)
          for (NodeId m : members)
            if (!oracle_.supports(m, d)) {
              why.push_back(
                  m == *req_by ? oracle_.why_not(m, d)
                               : fmt::format("{} for colocated {}", oracle_.why_not(m, d), who(m)));
              break;
            }
        problem = fmt::format("requested {} which cannot run it ({})", spec_text(*req_by),
                              fmt::join(why, "; "));
      }
    }
    // The auto device takes every unrequested group it runs whole.
    bool by_auto = false;
    if (!req && auto_ && runs_all(members, auto_->device)) {
      chosen = auto_->device;
      by_auto = true;
    }
    if (chosen == kUnplaced) {
      std::vector<size_t> capable = capable_all(members);
      if (!problem.empty() && !options_.soft)
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("{} {}; devices that can: {}", who(*req_by), problem, names(capable)));
      if (capable.empty()) fail_no_device(members);
      chosen = capable[0];
    }

    // Reasons: the member whose request decided is explicit (or fell back); the others are
    // colocated with it. Without a request the first member took the best device.
    const NodeId lead = req_by ? *req_by : anchor;
    for (NodeId m : members) {
      if (m == lead) {
        if (!req) set(m, chosen, PlacementReason::kDefaultPriority, by_auto ? "auto device" : "");
        else if (problem.empty()) set(m, chosen, PlacementReason::kExplicit);
        else set(m, chosen, fallback, problem);
      } else {
        set(m, chosen, PlacementReason::kColocated, fmt::format("with {}", node(lead).name));
      }
    }
    if (members.size() == 1 && !req && !by_auto && node(anchor).kind == NodeKind::kOp)
      followers_.insert(anchor);
  }

  // The group follows a variable an earlier compile placed. A member that device cannot run
  // (or whose request contradicts it) is an error under strict placement; soft placement
  // places it alone on the best device that runs it.
  void resolve_pinned(const std::vector<NodeId>& members, NodeId var) {
    const size_t d = device_[var];
    for (NodeId m : members) {
      if (m == var || (node(m).kind == NodeKind::kVariable && graph_.variables().find(m))) continue;
      const std::optional<DeviceSpec> own = request(m);
      std::string problem;
      PlacementReason fallback = PlacementReason::kFallbackNoKernel;
      if (!oracle_.supports(m, d)) {
        problem = fmt::format("colocated with variable {} on {} which cannot run it ({})",
                              node(var).name, devices_[d].name, oracle_.why_not(m, d));
      } else if (own && !matches(*own, devices_[d])) {
        problem = fmt::format("requested {} but colocated variable {} lives on {}", spec_text(m),
                              node(var).name, devices_[d].name);
        fallback = PlacementReason::kColocated;
      }
      if (problem.empty() && own) {
        set(m, d, PlacementReason::kExplicit);
        continue;
      }
      if (problem.empty()) {
        set(m, d, PlacementReason::kColocated, fmt::format("with {}", node(var).name));
        continue;
      }
      std::vector<size_t> capable = oracle_.capable(m);
      if (!options_.soft)
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("{} {}; devices that can: {}", who(m), problem, names(capable)));
      if (fallback == PlacementReason::kColocated) {
        set(m, d, fallback, problem);  // soft: colocation wins over the request
      } else {
        if (capable.empty()) fail_no_device({m});
        set(m, capable[0], fallback, problem);
      }
    }
  }

  // Pass 3. Only ops that were free to go anywhere (alone, unrequested) follow their inputs;
  // topological order lets a chain follow as a whole.
  void follow_inputs() {
    for (NodeId id : needed_) {
      if (!followers_.count(id)) continue;
      std::optional<size_t> only;
      std::optional<NodeId> from;
      bool one_device = true;
      for (ValueRef v : node(id).inputs) {
        const size_t d = device_[v.node];
        if (d == kUnplaced) continue;  // a floating input goes where this op goes
        if (only && *only != d) one_device = false;
        if (!only) {
          only = d;
          from = v.node;
        }
      }
      // Never onto a device automatic placement may not pick (an oracle the user put the
      // input on by name has not been named for this op).
      if (!only || !one_device || *only == device_[id] || !oracle_.supports(id, *only) ||
          !oracle_.is_automatic(*only))
        continue;
      set(id, *only, PlacementReason::kFollowsInput,
          fmt::format("input {} is on {}", node(*from).name, devices_[*only].name));
    }
  }

  // Pass 4. A placeholder or constant nobody asked to place is only bytes: it goes where it
  // is first used (as input of an op, else as the value assigned to a variable).
  void place_floating() {
    // One pass over the edges in topological order: the first consumer seen is the first.
    for (NodeId id : needed_)
      for (ValueRef v : node(id).inputs)
        if (device_[v.node] == kUnplaced)  // only floating nodes are unplaced by now
          set(v.node, device_[id], PlacementReason::kFollowsInput,
              fmt::format("first consumer {}", node(id).name));
    for (const Assign& a : graph_.assigns())
      if (in_needed_[a.variable] && in_needed_[a.value.node] && device_[a.value.node] == kUnplaced)
        set(a.value.node, device_[a.variable], PlacementReason::kFollowsInput,
            fmt::format("assigned to {}", node(a.variable).name));
    // Used by nothing placed here (fetched directly, say): the auto device, else the best
    // automatic device, else (only unnamed oracles) the first device: it holds only bytes.
    const size_t home = auto_                          ? auto_->device
                        : !oracle_.automatic().empty() ? oracle_.automatic()[0]
                                                       : oracle_.by_priority()[0];
    for (NodeId f : floating_)
      if (device_[f] == kUnplaced) set(f, home, PlacementReason::kDefaultPriority);
  }

  // Pass 5, in copies.cc.
  PlacedGraph build_placed() {
    std::vector<placement::Decision> decided(device_.size());
    for (NodeId id : needed_) decided[id] = {device_[id], reason_[id], detail_[id]};
    return placement::insert_copies(graph_, needed_, decided);
  }

  Graph& graph_;
  const std::vector<NodeId>& needed_;
  PlacementOptions options_;
  SupportOracle oracle_;
  const std::vector<LogicalDevice>& devices_;
  std::vector<bool> in_needed_;
  std::vector<size_t> device_;  // per NodeId; kUnplaced until a pass decides
  std::vector<PlacementReason> reason_;
  std::vector<std::string> detail_;
  std::vector<NodeId> parent_;  // union-find over colocation
  std::vector<NodeId> floating_;
  std::set<NodeId> followers_;
  std::optional<placement::AutoDevice> auto_;  // with options.auto_device, once chosen
};

}  // namespace

PlacedGraph place(Graph& graph, const std::vector<NodeId>& needed,
                  const PlacementOptions& options) {
  return Placer(graph, needed, options).run();
}

size_t PlacedGraph::producer(ValueRef v, size_t device) const {
  auto it = available.find({v, device});
  if (it == available.end())
    fail(DLRT_INTERNAL, fmt::format("placement: value {}:{} was never made available on device "
                                    "{}",
                                    v.node, v.output, device));
  return it->second;
}

}  // namespace dlrt::core
