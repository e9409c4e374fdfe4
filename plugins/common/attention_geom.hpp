// attention_geom.hpp: the geometry of causal_mask, attention and attention_grad (docs/ops.md,
// core/ops/infer_attention.cc) that every backend shares.
//
//   q (B..., Tq, D), k (B..., Tk, D), v (B..., Tk, Dv) -> o (B..., Tq, Dv), lse (B..., Tq)
//
// The batch dims B... are flattened to `heads` (batch * heads, say) contiguous problems.
// The causal mask is bottom-right aligned: query row i sees keys j <= i + offset, offset =
// Tk - Tq (>= 0; the schema refuses causal with Tq > Tk). Header-only; plain integers so the
// cuda plugin can use it on the host.
#pragma once

#include <cmath>
#include <cstdint>

#include "op_view.hpp"

namespace dlrt::plugin {

struct AttentionGeom {
  int64_t heads = 1;  // the product of the batch dims
  int64_t tq = 0, tk = 0, d = 0, dv = 0;
  double scale = 1.0;  // resolved: the attribute, or 1/sqrt(D) for 0
  bool causal = false;

  int64_t offset() const { return tk - tq; }
  // Keys row i sees: [0, key_end(i)); Tk without the mask.
  int64_t key_end(int64_t i) const {
    if (!causal) return tk;
    const int64_t e = i + offset() + 1;
    return e < tk ? e : tk;
  }
};

// attention's operand dims (inputs q, k, v start at `first`: 0 forward, 1 for attention_grad).
inline AttentionGeom attention_geom(const OpView& op, int first) {
  AttentionGeom g;
  const auto& q = op.input(first).dims;
  const auto& k = op.input(first + 1).dims;
  const auto& v = op.input(first + 2).dims;
  const size_t r = q.size();
  for (size_t i = 0; i + 2 < r; ++i) g.heads *= q[i];
  g.tq = q[r - 2];
  g.d = q[r - 1];
  g.tk = k[r - 2];
  g.dv = v[r - 1];
  const double s = op.get_float("scale");
  g.scale = s != 0.0 ? s : 1.0 / std::sqrt(double(g.d));
  g.causal = op.get_int("causal") != 0;
  return g;
}

// causal_mask's x (..., Tq, Tk) as `mats` matrices of (tq, tk).
struct CausalMaskGeom {
  int64_t mats = 1, tq = 0, tk = 0;
  // Entry (i, j) keeps x when j <= i + Tk - Tq.
  bool keep(int64_t i, int64_t j) const { return j <= i + (tk - tq); }
};
inline CausalMaskGeom causal_mask_geom(const OpView& op) {
  CausalMaskGeom g;
  const auto& x = op.input(0).dims;
  const size_t r = x.size();
  for (size_t i = 0; i + 2 < r; ++i) g.mats *= x[i];
  g.tq = x[r - 2];
  g.tk = x[r - 1];
  return g;
}

}  // namespace dlrt::plugin
