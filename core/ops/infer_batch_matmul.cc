// core/ops/infer_batch_matmul.cc: batch_matmul, the matrix product over batch dims that
// attention needs (scores = Q.K^T per head, out = P.V), with numpy/torch.matmul broadcasting.
//
//   a (..., M, K) [(..., K, M) if transpose_a], b (..., K, N) [(..., N, K) if transpose_b]
//   -> c (broadcast(a's batch dims, b's batch dims)..., M, N)
//
// The batch dims are everything but the last two, right-aligned and broadcast numpy-style
// (a missing or size-1 dim repeats), so a rank-2 operand is one matrix for every batch
// element: (B,T,d) x (d,d) is a per-position projection. At least one operand has rank >= 3
// (two matrices are `matmul`'s case, and keeping them apart keeps matmul's kernels simple).
#include <fmt/format.h>

#include <algorithm>

#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::out;

Status infer_batch_matmul(InferContext& ctx) {
  const bool ta = ctx.attr_bool("transpose_a"), tb = ctx.attr_bool("transpose_b");
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(0, 2));
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(1, 2));
  const Dims &a = ctx.dims(0), &b = ctx.dims(1);
  if (a.size() < 3 && b.size() < 3)
    return ctx.error("a {} and b {} are both matrices; batch_matmul wants at least one operand "
                     "of rank >= 3 (use matmul for two matrices)",
                     format_dims(a), format_dims(b));
  const size_t ra = a.size(), rb = b.size();
  const int64_t m = ta ? a[ra - 1] : a[ra - 2], ka = ta ? a[ra - 2] : a[ra - 1];
  const int64_t kb = tb ? b[rb - 1] : b[rb - 2], n = tb ? b[rb - 2] : b[rb - 1];
  if (ka != kb)
    return ctx.error("inner dimensions differ: a {} has K = {} and b {} has K = {} "
                     "(transpose_a={}, transpose_b={})",
                     format_dims(a), ka, format_dims(b), kb, ta, tb);
  const Dims batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  const Broadcast r = broadcast_shapes(batch_a, batch_b);
  if (!r.ok())
    return ctx.error("batch dims of a {} and b {} do not broadcast: a's batch dim {} is {} and "
                     "b's batch dim {} is {} (each pair must be equal or one of them 1)",
                     format_dims(a), format_dims(b), r.conflict_a, batch_a[r.conflict_a],
                     r.conflict_b, batch_b[r.conflict_b]);
  Dims c = r.dims;
  c.push_back(m);
  c.push_back(n);
  ctx.add_output(ctx.input(0).dtype, std::move(c));
  return Status();
}

}  // namespace

std::vector<OpDef> batch_matmul_ops() {
  return {OpDef{"batch_matmul",
                "misc",
                "c[...] = op(a[...]) . op(b[...]) over broadcast batch dims (numpy matmul)",
                {in("a", kFloatTypes, "(..., M, K)"), in("b", kFloatTypes, "(..., K, N)")},
                {out("c", "(..., M, N)")},
                {optional_attr("transpose_a", false).describe("a is stored (..., K, M)"),
                 optional_attr("transpose_b", false).describe("b is stored (..., N, K)")},
                infer_batch_matmul,
                {}}
              .sampled(samples::batch_matmul)
              .tol(kGemmTol)};
}

}  // namespace dlrt::ops
