// fold_constants.cc: the pass fold_constants (passes.hpp). An op whose inputs are all constants
// is computed once, at compile, and becomes a constant: the executable then holds its bytes
// and runs no kernel for it, and kernels that read it may prepare from it once (constant
// inputs, dlrt_op_desc.constant_inputs).
//
// Which ops: one output, at least one input, every input a constant, not random (OpDef::
// uses_rng: its numbers depend on the run), not stateful, and an output no larger than
// max(its inputs, 1 MiB), so folding never turns a small graph into a large constant (a
// broadcast of a scalar to a huge shape stays an op). Nodes are visited in order, so a chain
// of such ops folds from its first op to its last.
//
// Where: on the first device whose memory is the host's (the cpu plugin) and that runs the op,
// with the same kernel an executable there would use. With no such device, nothing folds.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "context.hpp"
#include "eager.hpp"
#include "ops/op_registry.hpp"
#include "passes/pass_list.hpp"
#include "status.hpp"
#include "tensor.hpp"

namespace dlrt::core::passes {

namespace {

constexpr size_t kAlwaysFoldBytes = size_t(1) << 20;

// The first host-memory device that runs `inst`, or nullopt.
std::optional<size_t> host_device_for(Context& ctx, const ops::OpInstance& inst) {
  const size_t devices = ctx.registry().devices().size();
  for (size_t d = 0; d < devices; ++d) {
    if (!device_has_host_memory(ctx, d)) continue;
    try {
      check_supported(ctx, inst, d);
      return d;
    } catch (const Error&) {
    }
  }
  return std::nullopt;
}

// The op of node `id` evaluated on its constant inputs; nullopt when it should not or cannot be
// folded.
std::optional<std::vector<uint8_t>> evaluate(Rewrite& rw, NodeId id) {
  const Node& n = rw.node(id);
  const ops::OpDef* def = ops::find_op(n.op);
  if (def == nullptr || def->uses_rng || def->stateful || n.outputs.size() != 1 || n.inputs.empty())
    return std::nullopt;
  std::vector<ops::TensorType> types;
  size_t in_bytes = 0;
  for (ValueRef v : n.inputs) {
    const Node& src = rw.node(v.node);
    if (src.kind != NodeKind::kConstant) return std::nullopt;
    types.push_back(src.outputs[0]);
    in_bytes += src.constant_data->size();
  }
  const size_t out_bytes = dense_byte_size(n.outputs[0]);
  if (out_bytes > std::max(in_bytes, kAlwaysFoldBytes)) return std::nullopt;
  ops::Result<ops::OpInstance> inst = ops::instantiate(n.op, types, n.attrs);
  if (!inst.ok()) return std::nullopt;
  Context& ctx = rw.graph().context();
  const std::optional<size_t> device = host_device_for(ctx, *inst);
  if (!device) return std::nullopt;

  std::vector<std::unique_ptr<Tensor>> inputs;
  std::vector<const void*> in_ptrs;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const std::vector<uint8_t>& bytes = *rw.node(n.inputs[i].node).constant_data;
    inputs.push_back(std::make_unique<Tensor>(ctx, *device, types[i]));
    if (!bytes.empty()) inputs.back()->write(bytes.data(), bytes.size());
    in_ptrs.push_back(inputs.back()->data());
  }
  Tensor out(ctx, *device, n.outputs[0]);
  ctx.eager().run(*inst, *device, in_ptrs, {out.data()});
  std::vector<uint8_t> result(out_bytes);
  out.read(result.data(), result.size());
  return result;
}

}  // namespace

void fold_constants(Rewrite& rw) {
  std::vector<std::string> folded;
  for (NodeId id : rw.live()) {
    const Node& n = rw.node(id);
    if (n.kind != NodeKind::kOp) continue;
    const std::string what = rw.describe(id);
    std::optional<std::vector<uint8_t>> bytes;
    try {
      bytes = evaluate(rw, id);
    } catch (const Error&) {
      continue;  // out of memory, a kernel that fails: the op runs in the executable instead
    }
    if (!bytes) continue;
    rw.replace_with_constant(id, std::move(*bytes));
    folded.push_back(what);
  }
  if (folded.empty()) return;
  std::string names;
  for (size_t i = 0; i < folded.size() && i < 8; ++i) names += (i ? ", " : "") + folded[i];
  if (folded.size() > 8) names += fmt::format(", and {} more", folded.size() - 8);
  rw.log(fmt::format("fold_constants: {} op{} computed at compile, now constants: {}",
                     folded.size(), folded.size() == 1 ? "" : "s", names));
}

}  // namespace dlrt::core::passes
