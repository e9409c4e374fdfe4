// core/ops/infer_gather.cc: gather (an embedding lookup: rows of params picked by integer
// ids, TF's tf.gather / ONNX Gather with axis 0) and scatter_add (its transpose: rows of
// updates summed into the rows their ids name), in the "misc" family of docs/ops.md.
//
// Shapes (I = the ids' dims, any rank, a scalar included; D = params' dims after the first):
//   gather       params (R, D...), indices (I...) i32|i64  -> y (I..., D...)
//                y[i..., d...] = params[indices[i...], d...]
//   scatter_add  indices (I...) i32|i64, updates (I..., D...) f32, attribute num_rows R
//                -> out (R, D...); out[r] = sum of updates[i...] over the i with indices[i] == r
// gather's gradient with respect to params is scatter_add(indices, dy, num_rows = R), and
// scatter_add's with respect to updates is gather(dy, indices) (core/autodiff/rules_nn.cc).
//
// Out-of-range ids (outside [0, R)) are a run-time error on the reference and cpu devices
// (INVALID_ARGUMENT naming the id, its position and R); the cuda device cannot report from
// an asynchronous kernel through the plugin ABI, so there a bad id gives a zero row (gather)
// or is skipped (scatter_add). docs/ops.md, "Decisions", says the same.
//
// scatter_add is deterministic on every device: each output cell is summed in index order
// (the order of the ids in row-major order), never with atomics.
#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::in_const;
using detail::out;

// params (R, D...), indices (I...) -> y (I..., D...)
Status infer_gather(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(0, 1));
  Dims y = ctx.dims(1);
  const Dims& p = ctx.dims(0);
  y.insert(y.end(), p.begin() + 1, p.end());
  if (y.size() > DLRT_MAX_RANK)
    return ctx.error("y would have rank {} (indices' rank {} + params' rank {} - 1), more than {}",
                     y.size(), ctx.rank(1), ctx.rank(0), DLRT_MAX_RANK);
  ctx.add_output(ctx.input(0).dtype, std::move(y));
  return Status();
}

// indices (I...), updates (I..., D...), num_rows R -> out (R, D...)
Status infer_scatter_add(InferContext& ctx) {
  const Dims& ids = ctx.dims(0);
  const Dims& upd = ctx.dims(1);
  const bool prefix = upd.size() >= ids.size() && std::equal(ids.begin(), ids.end(), upd.begin());
  if (!prefix)
    return ctx.error("{} has dims {}, expected them to start with indices' dims {}", ctx.label(1),
                     format_dims(upd), format_dims(ids));
  Dims y{ctx.attr_int("num_rows")};
  y.insert(y.end(), upd.begin() + static_cast<std::ptrdiff_t>(ids.size()), upd.end());
  if (y.size() > DLRT_MAX_RANK)
    return ctx.error("out would have rank {}, more than {}", y.size(), DLRT_MAX_RANK);
  ctx.add_output(ctx.input(1).dtype, std::move(y));
  return Status();
}

}  // namespace

std::vector<OpDef> gather_ops() {
  return {
      OpDef{"gather",
            "misc",
            "y[i...] = params[indices[i...]] (axis 0); an id outside [0,R) is an error",
            {in("params", kAllTypes, "(R,D...)"), in_const("indices", kIndexTypes, "(I...)", 0)},
            {out("y", "(I...,D...)")},
            {},
            infer_gather,
            {}}
          .sampled(samples::gather)
          .tol(kExact),
      OpDef{"scatter_add",
            "misc",
            "out[r] = sum of updates[i...] with indices[i...] == r, in index order",
            {in_const("indices", kIndexTypes, "(I...)", 0),
             in("updates", {DLRT_F32}, "(I...,D...)")},
            {out("out", "(num_rows,D...)")},
            {required_attr("num_rows", DLRT_ATTR_INT).at_least(1).describe("R, params' rows")},
            infer_scatter_add,
            {}}
          .sampled(samples::scatter_add)
          .tol(kReductionTol),
  };
}

}  // namespace dlrt::ops
