// rewrite.cc: see rewrite.hpp.
#include "passes/rewrite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <utility>

#include "context.hpp"
#include "eager.hpp"
#include "ops/op_registry.hpp"
#include "status.hpp"

namespace dlrt::core::passes {

namespace {

// Whether device `d` answers yes to `inst` (op_supported); a refusal is an answer, not an
// error, here.
bool supported(Context& ctx, const ops::OpInstance& inst, size_t d) {
  try {
    check_supported(ctx, inst, d);
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::vector<ops::TensorType> input_types(const Graph& g, const std::vector<ValueRef>& inputs) {
  std::vector<ops::TensorType> types;
  for (ValueRef v : inputs) types.push_back(g.type_of(v));
  return types;
}

}  // namespace

bool has_no_activation(const Node& n) {
  auto it = n.attrs.find("activation");
  return it == n.attrs.end() || it->second.as_string() == "none";
}

Rewrite::Rewrite(Graph& work, const std::vector<NodeId>& selected,
                 const std::vector<ValueRef>& fetches, const std::vector<Assign>& assigns)
    : g_(work), original_(selected), fetches_(fetches), assigns_(assigns) {
  for (NodeId id : selected) {
    const Node& n = g_.node(id);
    if (n.kind != NodeKind::kOp) continue;
    const ops::OpDef* def = ops::find_op(n.op);
    if (def != nullptr && def->stateful) stateful_roots_.push_back(id);
  }
}

void Rewrite::refresh() const {
  if (!dirty_) return;
  const size_t n = g_.nodes().size();
  live_.assign(n, 0);
  std::vector<NodeId> stack;
  auto root = [&](NodeId id) {
    if (!live_[id]) {
      live_[id] = 1;
      stack.push_back(id);
    }
  };
  for (ValueRef f : fetches_) root(f.node);
  for (const Assign& a : assigns_) {
    root(a.variable);
    root(a.value.node);
  }
  for (NodeId id : stateful_roots_) root(id);
  while (!stack.empty()) {
    const NodeId id = stack.back();
    stack.pop_back();
    for (ValueRef in : g_.node(id).inputs) root(in.node);
  }
  reads_.clear();
  root_reads_.clear();
  for (NodeId id = 0; id < n; ++id) {
    if (!live_[id]) continue;
    for (ValueRef in : g_.node(id).inputs) {
      auto& r = reads_[in];
      ++r.first;
      r.second = id;
    }
  }
  for (ValueRef f : fetches_) ++root_reads_[f];
  for (const Assign& a : assigns_) ++root_reads_[a.value];
  dirty_ = false;
}

std::vector<NodeId> Rewrite::live() const {
  refresh();
  std::vector<NodeId> out;
  for (NodeId id = 0; id < live_.size(); ++id)
    if (live_[id]) out.push_back(id);
  return out;
}

bool Rewrite::is_live(NodeId id) const {
  refresh();
  return id < live_.size() && live_[id];
}

std::optional<NodeId> Rewrite::sole_reader(ValueRef v) const {
  refresh();
  if (root_reads_.count(v) != 0) return std::nullopt;
  auto it = reads_.find(v);
  if (it == reads_.end() || it->second.first != 1) return std::nullopt;
  if (g_.node(it->second.second).kind != NodeKind::kOp) return std::nullopt;
  return it->second.second;
}

std::vector<NodeId> Rewrite::readers(ValueRef v) const {
  refresh();
  std::vector<NodeId> out;
  for (NodeId id = 0; id < live_.size(); ++id) {
    if (!live_[id] || g_.node(id).kind != NodeKind::kOp) continue;
    for (ValueRef in : g_.node(id).inputs)
      if (in == v) {
        out.push_back(id);
        break;
      }
  }
  return out;
}

bool Rewrite::read_by_root(ValueRef v) const {
  refresh();
  return root_reads_.count(v) != 0;
}

ValueRef Rewrite::helper(NodeId anchor, const std::string& suffix, const std::string& op,
                         const std::vector<ValueRef>& inputs, const ops::AttrMap& attrs) {
  const Node& a = g_.node(anchor);
  const std::string name = a.name + "/" + suffix;
  // An empty name lets the graph make it unique when a helper of that name exists already.
  const std::string free_name = g_.find(name) ? std::string() : name;
  const ValueRef v = g_.add_op(op, free_name, inputs, attrs)[0];
  Node& h = g_.mutable_node(v.node);
  const Node& anchor_node = g_.node(anchor);  // add_op may have moved the node list
  h.requested_device = anchor_node.requested_device;
  h.requested = anchor_node.requested;
  h.colocation_group = anchor_node.colocation_group;
  h.is_gradient = anchor_node.is_gradient;
  auto it = helper_keys_.find(anchor);
  const int64_t major = it == helper_keys_.end() ? int64_t(anchor) : std::get<0>(it->second);
  helper_keys_[v.node] = Key{major, 0, sequence_++};
  dirty_ = true;
  return v;
}

ValueRef Rewrite::helper_constant(NodeId anchor, const std::string& suffix,
                                  const ops::TensorType& type, std::vector<uint8_t> bytes) {
  const std::string name = g_.node(anchor).name + "/" + suffix;
  const ValueRef v = g_.add_constant(g_.find(name) ? std::string() : name, type, std::move(bytes));
  helper_keys_[v.node] = Key{-1, 0, sequence_++};  // no inputs: first of all
  dirty_ = true;
  return v;
}

bool Rewrite::devices_agree(const std::vector<NodeId>& pattern,
                            const ops::OpInstance& fused) const {
  Context& ctx = g_.context();
  std::vector<ops::OpInstance> originals;
  for (NodeId id : pattern) {
    const Node& n = g_.node(id);
    ops::Result<ops::OpInstance> inst = ops::instantiate(n.op, input_types(g_, n.inputs), n.attrs);
    if (!inst.ok()) return false;
    originals.push_back(std::move(*inst));
  }
  const size_t devices = ctx.registry().devices().size();
  for (size_t d = 0; d < devices; ++d) {
    bool runs_pattern = true;
    for (const ops::OpInstance& o : originals) runs_pattern = runs_pattern && supported(ctx, o, d);
    if (runs_pattern && !supported(ctx, fused, d)) return false;
  }
  return true;
}

bool Rewrite::replace_with_op(NodeId anchor, const std::string& op,
                              const std::vector<ValueRef>& inputs, const ops::AttrMap& attrs,
                              const std::vector<NodeId>& pattern) {
  ops::Result<ops::OpInstance> inst = ops::instantiate(op, input_types(g_, inputs), attrs);
  if (!inst.ok() || inst->outputs() != g_.node(anchor).outputs) return false;
  if (!devices_agree(pattern, *inst)) return false;
  Node& n = g_.mutable_node(anchor);
  n.op = op;
  n.inputs = inputs;
  n.attrs = inst->attrs();
  dirty_ = true;
  changed_ = true;
  return true;
}

bool Rewrite::can_replace(NodeId anchor, const std::string& op, const std::vector<ValueRef>& inputs,
                          const ops::AttrMap& attrs, const std::vector<NodeId>& pattern) const {
  ops::Result<ops::OpInstance> inst = ops::instantiate(op, input_types(g_, inputs), attrs);
  return inst.ok() && inst->outputs() == g_.node(anchor).outputs && devices_agree(pattern, *inst);
}

bool Rewrite::can_fuse(const std::vector<NodeId>& pattern, const std::string& op,
                       const std::vector<ValueRef>& inputs, const ops::AttrMap& attrs) const {
  ops::Result<ops::OpInstance> inst = ops::instantiate(op, input_types(g_, inputs), attrs);
  return inst.ok() && devices_agree(pattern, *inst);
}

bool Rewrite::redirect(ValueRef from, ValueRef to) {
  if (read_by_root(from)) return false;
  for (NodeId id : readers(from))
    for (ValueRef& in : g_.mutable_node(id).inputs)
      if (in == from) in = to;
  dirty_ = true;
  changed_ = true;
  return true;
}

void Rewrite::replace_with_constant(NodeId anchor, std::vector<uint8_t> bytes) {
  Node& n = g_.mutable_node(anchor);
  n.kind = NodeKind::kConstant;
  n.op.clear();
  n.inputs.clear();
  n.attrs.clear();
  n.constant_data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  dirty_ = true;
  changed_ = true;
}

std::vector<NodeId> Rewrite::topological(const std::vector<NodeId>& nodes) const {
  // Kahn's algorithm over `nodes`, the smallest key first: ascending ids where the graph's
  // order already holds, helpers just before the anchor they were made for.
  auto key = [&](NodeId id) {
    auto it = helper_keys_.find(id);
    return it != helper_keys_.end() ? it->second : Key{int64_t(id), 1, 0};
  };
  std::map<NodeId, int> pending;
  std::map<NodeId, std::vector<NodeId>> users;
  for (NodeId id : nodes) pending[id] = 0;
  for (NodeId id : nodes)
    for (ValueRef in : g_.node(id).inputs)
      if (pending.count(in.node) != 0) {
        ++pending[id];
        users[in.node].push_back(id);
      }
  using Item = std::pair<Key, NodeId>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (const auto& [id, count] : pending)
    if (count == 0) ready.push({key(id), id});
  std::vector<NodeId> out;
  while (!ready.empty()) {
    const NodeId id = ready.top().second;
    ready.pop();
    out.push_back(id);
    for (NodeId u : users[id])
      if (--pending[u] == 0) ready.push({key(u), u});
  }
  if (out.size() != nodes.size())
    fail(DLRT_INTERNAL, "graph passes: the rewritten graph has a cycle (a pass bug)");
  return out;
}

std::vector<NodeId> Rewrite::selection(bool keep_dead) const {
  std::vector<NodeId> nodes = live();
  if (keep_dead) {
    std::vector<char> in(g_.nodes().size(), 0);
    for (NodeId id : nodes) in[id] = 1;
    for (NodeId id : original_)
      if (!in[id]) nodes.push_back(id);
    // A kept dead node still reads what it read: keep its inputs too.
    for (size_t i = 0; i < nodes.size(); ++i) {
      in[nodes[i]] = 1;
      for (ValueRef v : g_.node(nodes[i]).inputs)
        if (!in[v.node]) {
          in[v.node] = 1;
          nodes.push_back(v.node);
        }
    }
  }
  return topological(nodes);
}

std::vector<NodeId> Rewrite::dropped() const {
  std::vector<NodeId> out;
  for (NodeId id : original_)
    if (!is_live(id)) out.push_back(id);
  return out;
}

std::string Rewrite::describe(NodeId id) const {
  const Node& n = g_.node(id);
  return fmt::format("{} ({})", n.name,
                     n.kind == NodeKind::kOp         ? n.op
                     : n.kind == NodeKind::kConstant ? "constant"
                     : n.kind == NodeKind::kVariable ? "variable"
                                                     : "placeholder");
}

}  // namespace dlrt::core::passes
