// core/ops/infer_attention.cc: the "attention" family — causal_mask, the fused
// scaled-dot-product attention op and its backward op attention_grad.
//
//   causal_mask     x (..., Tq, Tk) -> y (..., Tq, Tk):
//                   y[..., i, j] = x[..., i, j] if j <= i + (Tk - Tq), else `fill` (-inf).
//                   Bottom-right alignment (flash-attention's, a key/value cache's): the last
//                   query row sees every key; with Tq == Tk it is the usual lower triangle.
//                   Tq > Tk would leave the first rows without any key: INVALID_ARGUMENT.
//   attention       q (B..., Tq, D), k (B..., Tk, D), v (B..., Tk, Dv), identical batch dims
//                   B... (rank >= 3, e.g. (batch, heads, T, head_dim)):
//                     S = q k^T * scale [causal: masked as causal_mask with -inf],
//                     lse = logsumexp(S, last axis)            (B..., Tq)
//                     o = exp(S - lse) v                       (B..., Tq, Dv)
//                   scale 0 (the default) means 1/sqrt(D). lse is saved for the backward,
//                   as layer_norm saves mean/rstd (FlashAttention-2's L).
//   attention_grad  do, q, k, v, o, lse -> dq, dk, dv (FlashAttention-2's backward):
//                     P = exp(S - lse) (0 where masked), dv = P^T do, dP = do v^T,
//                     delta = rowsum(do * o), dS = P * (dP - delta),
//                     dq = scale * dS k, dk = scale * dS^T q.
#include <cmath>
#include <limits>

#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::in_const;
using detail::out;

Status check_causal_attr(InferContext& ctx) {
  const int64_t c = ctx.attr_int("causal");
  if (c != 0 && c != 1)
    return ctx.error("attribute 'causal' is {}, expected 0 (no mask) or 1 (causal)", c);
  return Status();
}

// x (..., Tq, Tk) -> y of x's type.
Status infer_causal_mask(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(0, 2));
  const Dims& x = ctx.dims(0);
  const int64_t tq = x[x.size() - 2], tk = x.back();
  if (tq > tk)
    return ctx.error("{} has dims {}: Tq = {} > Tk = {}, expected Tq <= Tk (the mask is "
                     "bottom-right aligned: row i sees keys j <= i + Tk - Tq, so rows before "
                     "Tq - Tk would see none)",
                     ctx.label(0), format_dims(x), tq, tk);
  if (std::isnan(ctx.attr_float("fill")))
    return ctx.error("attribute 'fill' is NaN, expected a number or -inf");
  ctx.add_output(ctx.input(0).dtype, x);
  return Status();
}

// The dims attention's operands share. Filled by check_qkv.
struct Qkv {
  Dims batch;  // B...
  int64_t tq, tk, d, dv;
};

// Checks q (input iq), k (iq+1) and v (iq+2) against each other and the attributes.
Result<Qkv> check_qkv(InferContext& ctx, int iq) {
  DLRT_OPS_RETURN_IF_ERROR(check_causal_attr(ctx));
  if (!std::isfinite(ctx.attr_float("scale")))
    return ctx.error("attribute 'scale' is {}, expected a finite number (0: 1/sqrt(D))",
                     ctx.attr_float("scale"));
  const int ik = iq + 1, iv = iq + 2;
  const int r = ctx.rank(iq);
  if (r < 3)
    return ctx.error("{} has dims {}, expected rank >= 3 (B..., Tq, D), e.g. (batch, heads, "
                     "T, head_dim)",
                     ctx.label(iq), format_dims(ctx.dims(iq)));
  for (int i : {ik, iv})
    if (ctx.rank(i) != r)
      return ctx.error("{} has dims {}, expected rank {} like {} {}", ctx.label(i),
                       format_dims(ctx.dims(i)), r, ctx.label(iq), format_dims(ctx.dims(iq)));
  const Dims &q = ctx.dims(iq), &k = ctx.dims(ik), &v = ctx.dims(iv);
  Qkv s;
  s.batch.assign(q.begin(), q.end() - 2);
  for (int i : {ik, iv})
    if (Dims(ctx.dims(i).begin(), ctx.dims(i).end() - 2) != s.batch)
      return ctx.error("{} has dims {}, expected the batch dims {} of {} {} (no broadcasting)",
                       ctx.label(i), format_dims(ctx.dims(i)), format_dims(s.batch),
                       ctx.label(iq), format_dims(q));
  s.tq = q[size_t(r - 2)];
  s.d = q.back();
  s.tk = k[size_t(r - 2)];
  s.dv = v.back();
  if (k.back() != s.d)
    return ctx.error("{} has dims {}, expected (B..., Tk, {}): keys have q's depth D = {}",
                     ctx.label(ik), format_dims(k), s.d, s.d);
  if (v[size_t(r - 2)] != s.tk)
    return ctx.error("{} has dims {}, expected (B..., {}, Dv): one value per key (Tk = {})",
                     ctx.label(iv), format_dims(v), s.tk, s.tk);
  if (ctx.attr_int("causal") == 1 && s.tq > s.tk)
    return ctx.error("causal with Tq = {} > Tk = {}: expected Tq <= Tk (the mask is "
                     "bottom-right aligned, so the first {} query rows would see no key)",
                     s.tq, s.tk, s.tq - s.tk);
  return s;
}

Dims with(Dims d, std::initializer_list<int64_t> tail) {
  d.insert(d.end(), tail);
  return d;
}

// q, k, v -> o (B..., Tq, Dv), lse (B..., Tq)
Status infer_attention(InferContext& ctx) {
  Result<Qkv> s = check_qkv(ctx, 0);
  if (!s.ok()) return s.status();
  ctx.add_output(ctx.input(0).dtype, with(s->batch, {s->tq, s->dv}));
  ctx.add_output(ctx.input(0).dtype, with(s->batch, {s->tq}));
  return Status();
}

// do, q, k, v, o, lse -> dq, dk, dv (the dims of q, k, v)
Status infer_attention_grad(InferContext& ctx) {
  Result<Qkv> s = check_qkv(ctx, 1);
  if (!s.ok()) return s.status();
  const Dims o = with(s->batch, {s->tq, s->dv}), lse = with(s->batch, {s->tq});
  for (int i : {0, 4})
    if (ctx.dims(i) != o)
      return ctx.error("{} has dims {}, expected {} (B..., Tq, Dv): attention's output o",
                       ctx.label(i), format_dims(ctx.dims(i)), format_dims(o));
  if (ctx.dims(5) != lse)
    return ctx.error("{} has dims {}, expected {} (B..., Tq): attention's output lse",
                     ctx.label(5), format_dims(ctx.dims(5)), format_dims(lse));
  for (int i = 1; i <= 3; ++i) ctx.add_output(ctx.input(0).dtype, ctx.dims(i));
  return Status();
}

std::vector<AttrSpec> attention_attrs() {
  return {optional_attr("scale", 0.0)
              .try_values({0.25})
              .describe("multiplies q k^T; 0 means 1/sqrt(D)"),
          optional_attr("causal", int64_t{0})
              .try_values({int64_t{1}})
              .describe("1: key j is masked for query i when j > i + Tk - Tq (bottom-right)")};
}

}  // namespace

std::vector<OpDef> attention_ops() {
  const DtypeSet& F = kFloatTypes;
  return {
      OpDef{"causal_mask",
            "attention",
            "y = x where key j <= query i + Tk - Tq (bottom-right aligned), else fill",
            {in("x", F, "(..., Tq, Tk)")},
            {out("y", "(..., Tq, Tk)")},
            {optional_attr("fill", -std::numeric_limits<double>::infinity())
                 .try_values({0.0})
                 .describe("the value of masked entries (-inf: before a softmax)")},
            infer_causal_mask,
            {}}
          .sampled(samples::causal_mask)
          .tol(kExact),
      OpDef{"attention",
            "attention",
            "o = softmax(q k^T * scale [+ causal mask]) v, and each row's log-sum-exp lse",
            {in("q", F, "(B..., Tq, D)"), in("k", F, "(B..., Tk, D)"),
             in("v", F, "(B..., Tk, Dv)")},
            {out("o", "(B..., Tq, Dv)"), out("lse", "(B..., Tq)")},
            attention_attrs(),
            infer_attention,
            {}}
          .sampled(samples::attention(false))
          .tol(kGemmTol),
      OpDef{"attention_grad",
            "attention",
            "dq, dk, dv of attention's o from the saved o and lse (FlashAttention-2)",
            {in_const("do", F, "(B..., Tq, Dv)"), in_const("q", F, "(B..., Tq, D)"),
             in_const("k", F, "(B..., Tk, D)"), in_const("v", F, "(B..., Tk, Dv)"),
             in_const("o", F, "(B..., Tq, Dv)"), in_const("lse", F, "(B..., Tq)")},
            {out("dq", "(B..., Tq, D)"), out("dk", "(B..., Tk, D)"),
             out("dv", "(B..., Tk, Dv)")},
            attention_attrs(),
            infer_attention_grad,
            {}}
          .sampled(samples::attention(true))
          .gradient_free("it is a backward op, and dlrt differentiates to first order only")
          .tol(kGemmTol),
  };
}

}  // namespace dlrt::ops
