// passes.hpp: the graph-pass stage of a compile (docs/design.md, "Graph passes").
//
// Between node selection and placement, a compile hands the selected subgraph to a fixed
// sequence of named passes. Each pass is a rewrite Graph -> Graph with a log of what it
// changed; each can be turned off by an option. Front ends (nn, the ONNX importer, the C API)
// build plain graphs and leave fusing and folding to this stage.
//
// The stage never changes the caller's graph: it works on a graph derived from it
// (Graph::derive: same node ids, shared constant bytes, the caller's variables), which the
// executable keeps. Every rewrite replaces one node, the *anchor*, in place: the anchor keeps
// its id, name, device request and outputs (so consumers, fetches and assigns that read it
// need no change) and becomes the fused op or the folded constant; the nodes it replaced drop
// out when the selection is recomputed (remove_dead_nodes). Helper nodes a rewrite needs (the
// folded weights of a batch norm) are appended and ordered just before their anchor.
//
// The passes, in the stage's order:
//   fold_batch_norm       first, mul / add / sub / div after an inference batch_norm (NHWC or
//                         (N,C); the batch norm's output first for sub and div) by a
//                         per-channel (C) or single value, the batch norm read only there:
//                         folded into the batch norm's scale and bias (an exporter's
//                         BatchNormalization + Mul + Add); then an
//                         inference batch_norm (NHWC or (N,C)) whose input is a linear conv2d /
//                         conv2d_bias_act or matmul / matmul_bias_act (or a bias_add over a
//                         conv2d / matmul) read by nothing else:
//                         one conv2d_bias_act / matmul_bias_act with w * s and b * s + shift,
//                         s = gamma * rsqrt(var + epsilon), shift = beta - mean * s, computed
//                         by ops from whatever gamma/beta/mean/var are (variables: every run;
//                         constants: folded below), the batch norm's activation kept
//   fuse_bias_activation  conv2d -> bias_add => conv2d_bias_act; matmul -> bias_add =>
//                         matmul_bias_act; conv2d_bias_act / matmul_bias_act / batch_norm
//                         with activation none -> relu | sigmoid | tanh => the same op with
//                         that activation (batch_norm: relu only); a training step's
//                         batch_norm_train -> relu => batch_norm_train with activation relu,
//                         its backward relu_grad -> batch_norm_grad => batch_norm_relu_grad
//   fuse_residual_tail    a training step's relu(add(batch_norm_train(x), shortcut)) =>
//                         batch_norm_add_relu_train(x, shortcut, ...), its backward
//                         relu_grad -> batch_norm_grad => batch_norm_add_relu_grad (which
//                         also gives the shortcut's gradient)
//   fold_constants        an op of one output whose inputs are all constants (not random, not
//                         stateful, output no larger than max(its inputs, 1 MiB)) runs once on
//                         a host-memory device at compile and becomes a constant
//   remove_dead_nodes     the selection is recomputed from the fetches, the assigns and the
//                         stateful ops, dropping what the rewrites left unread
// A fusion happens only where the devices agree: every device that can run each node of the
// pattern must be able to run the fused op (plugins answer op_supported), so a rewrite never
// takes an op away from a device placement could have used.
//
// A pattern's intermediate values must be read only inside the pattern: by no other selected
// node, fetch or assign. A training step's forward values are mostly read by its gradients,
// so a training fusion takes the gradient ops autodiff made for its forward pattern into the
// pattern and rewrites both (the batch norm fusions); elsewhere the stage fuses only what
// nothing else reads (conv2d -> bias_add, whose gradient needs only dy).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.hpp"

namespace dlrt::core::passes {

enum class Pass {
  kFoldBatchNorm,
  kFuseBiasActivation,
  kFuseResidualTail,
  kFoldConstants,
  kRemoveDeadNodes
};
inline constexpr size_t kPassCount = 5;

// The passes in the stage's order, and their names as options and logs spell them.
const std::array<Pass, kPassCount>& stage_order();
const char* pass_name(Pass pass);

// Which passes run. Parsed from a comma list read left to right: "default" (every pass),
// "none", a pass name (turn it on) or "-name" (turn it off); "" is "default". Examples:
// "default,-fold_constants", "none,fuse_bias_activation". INVALID_ARGUMENT names an unknown
// entry and lists the passes.
struct PassSet {
  std::array<bool, kPassCount> on{};
  bool has(Pass p) const { return on[static_cast<size_t>(p)]; }
  bool any() const;
  static PassSet parse(std::string_view spec);
  std::string to_string() const;  // "fold_batch_norm,fuse_bias_activation,..." or "none"
};

struct StageResult {
  std::vector<NodeId> nodes;     // the new selection, in a topological order
  std::vector<std::string> log;  // one line per change, "<pass>: <what> -> <what>"
  bool changed = false;
};

// Runs the passes of `set` over `work`, a graph derived from the caller's: `selected` is
// select_nodes' result for `fetches` (and `assigns`, the executable's assigns). The feeds are
// placeholders, which no pass changes.
StageResult run_stage(Graph& work, const std::vector<NodeId>& selected,
                      const std::vector<ValueRef>& fetches, const std::vector<Assign>& assigns,
                      const PassSet& set);

}  // namespace dlrt::core::passes
