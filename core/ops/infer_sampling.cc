// core/ops/infer_sampling.cc: sampling token ids from a model's logits (text generation), in the
// "misc" family of docs/ops.md:
//
//   multinomial  logits (B, K) f32, num_samples S >= 1, seed -> ids (B, S) i64: S draws with
//                replacement from softmax(logits[b]) for every row b, as tf.random.categorical.
//                Draw (b, s) takes the Philox uniform u of element index b*S + s of the shared
//                stream (plugins/common/philox.hpp, keyed by seed, counter from the run's
//                rng_offset: a new run draws new ids, a captured graph too) and returns the
//                smallest id k with u * Z < sum_{j<=k} w_j, where m = max_j logits[b, j],
//                w_j = exp(logits[b, j] - m) and Z = sum_j w_j, all in double, summed in id
//                order (the same expressions on every device: the ids are compared exactly).
//                A weight 0 (a -inf logit, or one that underflows) is never drawn. A row
//                with a NaN, a +inf, or no finite logit (all -inf) has no distribution: every
//                draw of it is -1 on every device (a documented value, not an error: a kernel
//                cannot fail on data without a device sync; an id of -1 stands out and any
//                gather/embedding/decode of it fails or yields nothing).
//                Temperature: scale the logits first (logits / t); top-k: mask with -inf.
//                No gradient: the ids are integers, piecewise constant in the logits.
#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in_const;
using detail::out;

// logits (B, K) -> ids (B, num_samples) i64 (the schema already rejects a dim of 0)
Status infer_multinomial(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_rank(0, 2, "(B,K)"));
  ctx.add_output(DLRT_I64, {ctx.dims(0)[0], ctx.attr_int("num_samples")});
  return Status();
}

}  // namespace

std::vector<OpDef> sampling_ops() {
  std::vector<OpDef> ops;
  ops.push_back(
      OpDef{"multinomial",
            "misc",
            "num_samples ids per row drawn with replacement from softmax(logits) (inverse CDF "
            "of a Philox uniform, in double); -1 for a row with NaN, +inf or no finite logit",
            {in_const("logits", {DLRT_F32}, "(B,K)")},
            {out("ids", "(B,num_samples)")},
            {optional_attr("num_samples", int64_t{1}).at_least(1).describe("S, draws per row"),
             optional_attr("seed", int64_t{0}).describe("Philox key; 64 bits")},
            infer_multinomial,
            {}}
          .sampled(samples::multinomial)
          .tol(kExact)
          .gradient_free("its outputs are integer ids, piecewise constant in the logits")
          .draws_random());
  return ops;
}

}  // namespace dlrt::ops
