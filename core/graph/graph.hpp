// graph.hpp: the core's graph IR — what dlrt_graph is inside, shared by the builder (graph.cc),
// autodiff (core/autodiff), placement (core/placement) and the executor (core/exec).
//
// A Graph is an append-only list of Nodes; a value is (node, output). Nodes are never removed
// (autodiff only adds), so a NodeId stays valid for the graph's life and the node list is
// already in a topological order (every input refers to an earlier node).
//
// A compile never changes the caller's graph: its graph passes (core/passes) rewrite a
// derived copy (Graph::derive) that the executable owns: the same nodes under the same ids,
// constant bytes shared rather than copied, the caller's variable storage. Passes there may
// append nodes and point inputs, assigns and fetches at them; every new input still refers to
// an earlier node, so the order stays topological.
//
// What it is not: a placed or scheduled graph. Placement results live in PlacedGraph
// (core/placement), buffers and kernels in an Executable (core/exec).
#pragma once

#include <dlrt/dlrt.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device_spec.hpp"
#include "ops/attrs.hpp"
#include "ops/op_def.hpp"

namespace dlrt::core {

class Context;
class VariableStore;

using NodeId = uint32_t;

// One output of one node. Encoded in the C API as dlrt_value = (node << 32) | output.
struct ValueRef {
  NodeId node = 0;
  uint32_t output = 0;
  friend bool operator==(ValueRef a, ValueRef b) {
    return a.node == b.node && a.output == b.output;
  }
  friend bool operator!=(ValueRef a, ValueRef b) { return !(a == b); }
  friend bool operator<(ValueRef a, ValueRef b) {
    return a.node != b.node ? a.node < b.node : a.output < b.output;
  }
};

inline dlrt_value to_c(ValueRef v) { return (uint64_t(v.node) << 32) | v.output; }
inline ValueRef from_c(dlrt_value v) { return {NodeId(v >> 32), uint32_t(v & 0xffffffffu)}; }

enum class NodeKind {
  kPlaceholder,  // fed at run time; one output
  kConstant,     // host bytes baked in; one output
  kVariable,     // persistent storage in the graph's VariableStore; one output (its value
                 // at the start of a run)
  kOp,           // an op of the registry (docs/ops.md)
};

struct Node {
  NodeId id = 0;
  std::string name;  // unique in the graph
  NodeKind kind = NodeKind::kOp;
  std::string op;  // registry op name for kOp; "" otherwise
  std::vector<ValueRef> inputs;
  ops::AttrMap attrs;                    // complete (defaults filled) for kOp
  std::vector<ops::TensorType> outputs;  // inferred at build time

  // Placement inputs.
  std::string requested_device;              // the device-scope spec as written, "" = none
  std::optional<DeviceSpec> requested;       // parsed; nullopt = none
  std::optional<uint32_t> colocation_group;  // nodes sharing a group share a device

  // kConstant: the bytes (dense, row-major); shared (immutable) between a graph and the
  // copies its compiles derive, so a model's weights are held once.
  std::shared_ptr<const std::vector<uint8_t>> constant_data;
  // kVariable: how to initialise it (an op with no inputs: "fill", "random_uniform", ...),
  // its complete attributes (shape/dtype set from the variable's desc), and trainability.
  std::string init_op;
  ops::AttrMap init_attrs;
  bool trainable = false;

  // True for nodes autodiff created (for logs and dumps).
  bool is_gradient = false;
};

// "after each run, `variable` holds `value`".
struct Assign {
  NodeId variable = 0;
  ValueRef value;
};

class Graph {
 public:
  explicit Graph(Context& context);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Context& context() const { return *context_; }

  // The working copy a compile's graph passes rewrite: every node under its id (constant
  // bytes shared), the assigns, the names, and `base`'s variable storage (variables keep one
  // value across every executable of `base`); no device scope open. `base` must outlive it.
  static std::unique_ptr<Graph> derive(const Graph& base);
  // For passes on a derived graph: assigns whose value a rewrite replaced.
  std::vector<Assign>& mutable_assigns() { return assigns_; }

  // Builders. All throw core::Error (INVALID_ARGUMENT with the op registry's message,
  // ALREADY_EXISTS for a duplicate name, NOT_FOUND for an unknown op) and leave the graph
  // unchanged on failure. `name` "" makes a unique one ("relu", "relu_1", ...).
  ValueRef add_placeholder(const std::string& name, const ops::TensorType& type);
  ValueRef add_constant(const std::string& name, const ops::TensorType& type,
                        std::vector<uint8_t> bytes);
  ValueRef add_variable(const std::string& name, const ops::TensorType& type,
                        const std::string& init_op, const ops::AttrMap& init_attrs, bool trainable);
  std::vector<ValueRef> add_op(const std::string& op, const std::string& name,
                               const std::vector<ValueRef>& inputs, const ops::AttrMap& attrs);
  void add_assign(ValueRef variable, ValueRef value);

  // Device scopes and colocation.
  void push_device(const std::string& spec);  // "" clears the request inside the scope
  void pop_device();                          // FAILED_PRECONDITION when nothing is pushed
  void colocate(ValueRef a, ValueRef b);

  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(NodeId id) const;  // OUT_OF_RANGE checked
  Node& mutable_node(NodeId id);
  const ops::TensorType& type_of(ValueRef v) const;  // INVALID_ARGUMENT for a bad value
  const std::vector<Assign>& assigns() const { return assigns_; }
  std::optional<ValueRef> find(const std::string& name_or_name_colon_k) const;
  std::vector<NodeId> trainable_variables() const;

  // Storage of every variable of this graph (device buffers, initialised flags).
  VariableStore& variables() { return *store_; }

 private:
  NodeId append(Node node);  // assigns id, requested device from the scope stack, unique name
  std::string unique_name(const std::string& base);

  Context* context_;
  std::vector<Node> nodes_;
  std::vector<Assign> assigns_;
  std::map<std::string, NodeId, std::less<>> by_name_;
  std::map<std::string, int> name_counters_;
  std::vector<std::string> device_scopes_;  // innermost last
  uint32_t next_colocation_group_ = 0;
  std::unique_ptr<VariableStore> own_store_;  // null in a derived graph
  VariableStore* store_;                      // own_store_, or the base graph's
};

}  // namespace dlrt::core
