// select.cc: see select.hpp.
#include "exec/select.hpp"

#include <fmt/format.h>

#include <set>

#include "ops/op_registry.hpp"
#include "status.hpp"

namespace dlrt::core::exec {

namespace {

// Marks `root` and everything it depends on. Inputs always precede their node, so one
// backwards sweep over ids from the highest marked node suffices.
void mark_ancestors(const Graph& graph, NodeId root, std::vector<bool>& needed) {
  if (needed[root]) return;
  needed[root] = true;
  for (NodeId id = root + 1; id-- > 0;) {
    if (!needed[id]) continue;
    for (ValueRef in : graph.node(id).inputs) needed[in.node] = true;
  }
}

}  // namespace

Selection select_nodes(const Graph& graph, const std::vector<ValueRef>& feeds,
                       const std::vector<ValueRef>& fetches, bool run_assigns) {
  const size_t n = graph.nodes().size();
  std::set<NodeId> fed;
  for (ValueRef f : feeds) {
    graph.type_of(f);  // INVALID_ARGUMENT for a value that is not in the graph
    const Node& node = graph.node(f.node);
    if (node.kind != NodeKind::kPlaceholder)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("feed '{}' is not a placeholder: only placeholders can be fed", node.name));
    if (!fed.insert(f.node).second)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("placeholder '{}' is fed twice", node.name));
  }
  if (fetches.empty()) fail(DLRT_INVALID_ARGUMENT, "compile: no fetches given");

  std::vector<bool> needed(n, false);
  for (ValueRef f : fetches) {
    graph.type_of(f);
    mark_ancestors(graph, f.node, needed);
  }

  // Assigns: all of them or none (select.hpp). Each is applied at the end of the run, so it
  // needs its value computed and its variable placed.
  const std::vector<Assign>& all = graph.assigns();
  if (run_assigns)
    for (const Assign& a : all) {
      mark_ancestors(graph, a.variable, needed);
      mark_ancestors(graph, a.value.node, needed);
    }
  // A stateful op (OpDef::stateful: its outputs are state that outlives the run, such as
  // batch_norm_train's running statistics) is part of every step that runs the assigns, even
  // when nothing fetches or assigns its results: a step never prunes it.
  // Unless every state it would write (each in-place input that is a variable) is assigned
  // another value in this executable: then those assigns decide the next values and the op
  // has nothing left to write (a replicated step's apply sets the moving statistics from the
  // replicas' mean, in a graph whose batch_norm_train ran in the grads executable).
  auto superseded = [&](NodeId id, const ops::OpDef& def) {
    if (def.in_place.empty()) return false;
    for (const ops::InPlace& p : def.in_place) {
      const ValueRef state = graph.node(id).inputs.at(static_cast<size_t>(p.input));
      if (graph.node(state.node).kind != NodeKind::kVariable) return false;
      bool other = false;
      for (const Assign& a : all) other |= a.variable == state.node && a.value.node != id;
      if (!other) return false;
    }
    return true;
  };
  if (run_assigns)
    for (NodeId id = 0; id < n; ++id) {
      const Node& node = graph.node(id);
      if (node.kind != NodeKind::kOp) continue;
      const ops::OpDef* def = ops::find_op(node.op);
      if (def != nullptr && def->stateful && !superseded(id, *def)) mark_ancestors(graph, id, needed);
    }

  Selection sel;
  std::set<NodeId> assigned;
  for (size_t a = 0; run_assigns && a < all.size(); ++a) {
    if (!assigned.insert(all[a].variable).second)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("variable '{}' has two assigns in one executable; only one value can "
                       "become its next value",
                       graph.node(all[a].variable).name));
    sel.assigns.push_back(all[a]);
  }
  for (NodeId id = 0; id < n; ++id) {
    if (!needed[id]) continue;
    const Node& node = graph.node(id);
    if (node.kind == NodeKind::kPlaceholder && fed.count(id) == 0)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("placeholder '{}' ({}) is needed by the fetches{} but not fed", node.name,
                       ops::to_string(node.outputs[0]),
                       run_assigns ? " or the assigns (run_assigns is on)" : ""));
    sel.nodes.push_back(id);
  }
  return sel;
}

}  // namespace dlrt::core::exec
