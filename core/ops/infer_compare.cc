// core/ops/infer_compare.cc: the comparisons (equal, not_equal, less, less_equal, greater,
// greater_equal) and where(cond, x, y).
//
// Comparisons broadcast a and b as add does and give a DLRT_BOOL tensor (1 where the
// comparison holds, 0 elsewhere; IEEE: every comparison with a NaN is false except
// not_equal). They have no gradient. where(cond, x, y) picks x where cond is true, else y,
// with cond, x and y broadcast together (ONNX Where, tf.where with three arguments,
// torch.where).
#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::in_const;
using detail::out;

// a, b -> c: BOOL of the broadcast shape.
Status infer_comparison(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(detail::infer_broadcast_binary(ctx));
  ctx.outputs().back().dtype = DLRT_BOOL;
  return Status();
}

// cond (BOOL), x, y -> z: x's dtype, the broadcast shape of all three.
Status infer_where(InferContext& ctx) {
  Dims dims = ctx.dims(0);
  for (int i = 1; i <= 2; ++i) {
    const Broadcast r = broadcast_shapes(dims, ctx.dims(i));
    if (!r.ok())
      return ctx.error(
          "cannot broadcast {} {} with the shape {} of the inputs before it: its dim {} is {}, "
          "theirs {} is {}",
          ctx.label(i), format_dims(ctx.dims(i)), format_dims(dims), r.conflict_b,
          ctx.dims(i)[r.conflict_b], r.conflict_a, dims[r.conflict_a]);
    dims = r.dims;
  }
  ctx.add_output(ctx.input(1).dtype, dims);
  return Status();
}

constexpr const char* kPredicate =
    "its output is a boolean predicate, whose derivative is zero wherever it is defined";

OpDef comparison(const char* name, const char* doc) {
  return OpDef{name,
               "elementwise",
               doc,
               {in_const("a", kNumericTypes), in_const("b", kNumericTypes)},
               {out("c")},
               {},
               infer_comparison,
               {}}
      .sampled(samples::comparison())
      .gradient_free(kPredicate)
      .tol(kExact);
}

}  // namespace

std::vector<OpDef> comparison_ops() {
  return {
      comparison("equal", "c = (a == b), broadcasting; BOOL"),
      comparison("not_equal", "c = (a != b), broadcasting; BOOL"),
      comparison("less", "c = (a < b), broadcasting; BOOL"),
      comparison("less_equal", "c = (a <= b), broadcasting; BOOL"),
      comparison("greater", "c = (a > b), broadcasting; BOOL"),
      comparison("greater_equal", "c = (a >= b), broadcasting; BOOL"),
      // cond has no type variable: it is BOOL whatever x and y are.
      OpDef{"where",
            "elementwise",
            "z = x where cond, else y; cond, x and y broadcast together",
            {in_const("cond", {DLRT_BOOL}, "", 0), in("x", kAllTypes), in("y", kAllTypes)},
            {out("z")},
            {},
            infer_where,
            {}}
          .sampled(samples::where)
          .tol(kExact),
  };
}

}  // namespace dlrt::ops
