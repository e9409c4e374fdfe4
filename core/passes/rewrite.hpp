// rewrite.hpp: what every graph pass works through (passes.hpp has the stage): the derived
// graph and the part of it the compile needs (the live set), who reads each value, an anchor
// node replaced in place, helper nodes ordered before their anchor, the devices' agreement on
// a fused op, and the log. Private to core/passes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "graph/graph.hpp"
#include "ops/op_instance.hpp"

namespace dlrt::core::passes {

// Whether op node `n` applies no activation (attribute "activation" absent or "none"): what a
// fusion may append one to.
bool has_no_activation(const Node& n);

class Rewrite {
 public:
  // `selected`: select_nodes' nodes; the roots that keep nodes alive are the fetches, the
  // executable's assigns (variable and value) and every selected stateful op.
  Rewrite(Graph& work, const std::vector<NodeId>& selected, const std::vector<ValueRef>& fetches,
          const std::vector<Assign>& assigns);

  Graph& graph() { return g_; }
  const Node& node(NodeId id) const { return g_.node(id); }

  // The nodes the compile needs now (recomputed after each change), in ascending id order;
  // passes walk them to find their patterns.
  std::vector<NodeId> live() const;
  bool is_live(NodeId id) const;

  // When `v` is read exactly once among the live nodes, by an op node, and by no fetch or
  // assign: that node. Otherwise nullopt (read twice, by nothing, or from outside the graph).
  std::optional<NodeId> sole_reader(ValueRef v) const;
  // sole_reader(v) == reader.
  bool read_only_by(ValueRef v, NodeId reader) const { return sole_reader(v) == reader; }
  // The live op nodes that read `v`, each once, in ascending id order (fetches and assigns
  // are not nodes: read_by_root says whether one reads `v`).
  std::vector<NodeId> readers(ValueRef v) const;
  bool read_by_root(ValueRef v) const;

  // Appends op `op` on `inputs` for `anchor`'s rewrite: ordered just before the anchor,
  // requesting its device, named "<anchor>/<suffix>". Returns output 0. Throws the registry's
  // error when the op does not instantiate (the caller then leaves the pattern alone).
  ValueRef helper(NodeId anchor, const std::string& suffix, const std::string& op,
                  const std::vector<ValueRef>& inputs, const ops::AttrMap& attrs = {});
  ValueRef helper_constant(NodeId anchor, const std::string& suffix, const ops::TensorType& type,
                           std::vector<uint8_t> bytes);

  // Makes `anchor` the op `op` on `inputs` with `attrs`, keeping its id, name, device request
  // and outputs. Refused (false, nothing changed) when the op does not instantiate, when its
  // outputs differ from the anchor's, or when some device that can run every node of
  // `pattern` cannot run the new op (the core fuses only where the devices say yes).
  bool replace_with_op(NodeId anchor, const std::string& op, const std::vector<ValueRef>& inputs,
                       const ops::AttrMap& attrs, const std::vector<NodeId>& pattern);
  // Makes `anchor` (an op of one output) a constant holding `bytes`.
  void replace_with_constant(NodeId anchor, std::vector<uint8_t> bytes);
  // Whether replace_with_op(anchor, op, inputs, attrs, pattern) would succeed, without
  // changing anything; a pass that rewrites several anchors asks first for each, so that it
  // changes all of them or none.
  bool can_replace(NodeId anchor, const std::string& op, const std::vector<ValueRef>& inputs,
                   const ops::AttrMap& attrs, const std::vector<NodeId>& pattern) const;
  // Whether `op` on `inputs` instantiates and every device that can run each node of
  // `pattern` can run it: the check a helper that takes over a pattern's work needs.
  bool can_fuse(const std::vector<NodeId>& pattern, const std::string& op,
                const std::vector<ValueRef>& inputs, const ops::AttrMap& attrs) const;
  // Every live op node reading `from` reads `to` instead (a pattern's result moved to another
  // node: readers of the value it replaced read the new one). Refused (false, nothing
  // changed) when a fetch or an assign reads `from`: the executable's outputs keep their ids.
  bool redirect(ValueRef from, ValueRef to);

  void log(std::string line) { log_.push_back(std::move(line)); }
  std::vector<std::string>& log_lines() { return log_; }
  bool changed() const { return changed_; }

  // The final selection, topologically ordered (helpers just before their anchors, otherwise
  // ascending ids): the live set, or with `keep_dead` the original selection plus every node
  // the rewrites made.
  std::vector<NodeId> selection(bool keep_dead) const;
  // The live nodes that were selected at the start and are not live any more.
  std::vector<NodeId> dropped() const;

  // "conv2d_1 (conv2d)": how logs name a node.
  std::string describe(NodeId id) const;

 private:
  using Key = std::tuple<int64_t, int, uint64_t>;  // (anchor id, 0 helper | 1 node, sequence)
  void refresh() const;                            // recomputes live_ and reads_ when dirty
  std::vector<NodeId> topological(const std::vector<NodeId>& nodes) const;
  bool devices_agree(const std::vector<NodeId>& pattern, const ops::OpInstance& fused) const;

  Graph& g_;
  std::vector<NodeId> original_;
  std::vector<ValueRef> fetches_;
  std::vector<Assign> assigns_;
  std::vector<NodeId> stateful_roots_;
  std::map<NodeId, Key> helper_keys_;  // helpers only; a node's own key is (id, 1, 0)
  uint64_t sequence_ = 0;
  std::vector<std::string> log_;
  bool changed_ = false;

  mutable bool dirty_ = true;
  mutable std::vector<char> live_;                            // by node id
  mutable std::map<ValueRef, std::pair<int, NodeId>> reads_;  // live op reads: count, a reader
  mutable std::map<ValueRef, int> root_reads_;                // fetches and assigns, per value
};

}  // namespace dlrt::core::passes
