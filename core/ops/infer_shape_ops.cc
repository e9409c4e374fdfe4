// core/ops/infer_shape_ops.cc: the ops that cut, join and frame tensors — concat, split,
// slice (and slice_grad), pad (and pad_grad), in the "reduce_shape" family of docs/ops.md.
// (The global pools are infer_global_pool.cc's.)
//
// Every rule here normalises the attributes it accepts in several spellings (negative axes,
// negative or out-of-range slice bounds, split's num) so that a plugin reads one form only:
//   concat, split: axis in 0..rank-1; split: sizes spelled out, num = their count;
//   slice, slice_grad: axes = (0..rank-1), begin = the first index taken on each dim (in
//   range), strides per dim, end = an in-range bound giving the same count (INT64_MIN when a
//   negative stride runs through index 0, ONNX's spelling of "to the front").
// Normalised attributes give the same result when inferred again (instantiate_desc does).
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "infer_common.hpp"
#include "samples.hpp"

namespace dlrt::ops {
namespace {
using detail::in;
using detail::in_const;
using detail::out;

// Axis `a` of a rank-`rank` input, or an error naming the attribute and the range.
Result<int> axis_of(const InferContext& ctx, std::string_view attr, int64_t a, int input) {
  std::optional<int> n = normalize_axis(a, ctx.rank(input));
  if (!n)
    return ctx.error("attribute '{}' is {}, out of range for {} of rank {} (expected {}..{})", attr,
                     a, ctx.label(input), ctx.rank(input), -ctx.rank(input), ctx.rank(input) - 1);
  return *n;
}

// ---- concat ---------------------------------------------------------------------------------

// x0, x1, ...: equal dims but on axis -> y: their axis dims summed
Status infer_concat(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(0, 1));
  Result<int> axis = axis_of(ctx, "axis", ctx.attr_int("axis"), 0);
  if (!axis.ok()) return axis.status();
  Dims y = ctx.dims(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const Dims& x = ctx.dims(i);
    bool fits = x.size() == y.size();
    for (size_t d = 0; fits && d < x.size(); ++d) fits = int(d) == *axis || x[d] == y[d];
    if (!fits) {
      Dims expected = ctx.dims(0);
      std::string shown = "(";
      for (size_t d = 0; d < expected.size(); ++d)
        shown +=
            (d ? "," : "") + (int(d) == *axis ? std::string("*") : std::to_string(expected[d]));
      return ctx.error("{} has dims {}, expected {} (the dims of input 0 (x) {} except on axis {})",
                       ctx.label(i), format_dims(x), shown + ")", format_dims(ctx.dims(0)), *axis);
    }
    y[*axis] += x[*axis];
  }
  ctx.normalize("axis", AttrValue(int64_t{*axis}));
  ctx.add_output(ctx.input(0).dtype, std::move(y));
  return Status();
}

// ---- split ----------------------------------------------------------------------------------

// x -> y0, y1, ...: x cut along axis into `sizes` (one -1 = the rest) or `num` equal parts
Status infer_split(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(0, 1));
  Result<int> axis = axis_of(ctx, "axis", ctx.attr_int("axis"), 0);
  if (!axis.ok()) return axis.status();
  const int64_t dim = ctx.dims(0)[*axis];
  const int64_t num = ctx.attr_int("num");
  Ints sizes = ctx.attr_ints("sizes");
  const std::string where =
      fmt::format("dim {} of {} {}", *axis, ctx.label(0), format_dims(ctx.dims(0)));
  if (sizes.empty() && num == 0)
    return ctx.error("give attribute 'sizes' (the part lengths) or 'num' (equal parts)");
  if (!sizes.empty() && num != 0 && num != static_cast<int64_t>(sizes.size()))
    return ctx.error("attribute 'num' is {} but 'sizes' {} has {} parts", num, format_dims(sizes),
                     sizes.size());
  if (sizes.empty()) {
    if (dim % num != 0)
      return ctx.error("attribute 'num' {} does not divide {} ({} is not a multiple of {})", num,
                       where, dim, num);
    sizes.assign(num, dim / num);
  } else {
    int unknown = -1;
    int64_t known = 0;
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (sizes[k] == -1 && unknown < 0) {
        unknown = static_cast<int>(k);
      } else if (sizes[k] < 1) {
        return ctx.error("attribute 'sizes' {} has {} at index {}, expected >= 1 (or one -1)",
                         format_dims(sizes), sizes[k], k);
      } else {
        known += sizes[k];
      }
    }
    if (unknown >= 0) {
      if (known >= dim)
        return ctx.error(
            "attribute 'sizes' {} leaves nothing for its -1: the others sum to {}, {} is {}",
            format_dims(sizes), known, where, dim);
      sizes[unknown] = dim - known;
    } else if (known != dim) {
      return ctx.error("attribute 'sizes' {} sums to {}, expected {} ({})", format_dims(sizes),
                       known, dim, where);
    }
  }
  for (int64_t s : sizes) {
    Dims y = ctx.dims(0);
    y[*axis] = s;
    ctx.add_output(ctx.input(0).dtype, std::move(y));
  }
  ctx.normalize("axis", AttrValue(int64_t{*axis}));
  ctx.normalize("num", AttrValue(static_cast<int64_t>(sizes.size())));
  ctx.normalize("sizes", AttrValue(sizes));
  return Status();
}

// ---- slice and slice_grad -------------------------------------------------------------------

// The normalised form of a slice of `x` (see the file comment) and the sliced dims.
struct SliceSpec {
  Ints begin, end, strides;
  Dims dims;
};

// ONNX Slice / Python slicing on every dim of `x`: dims not in `axes` are taken whole;
// negative begin/end count from the end; then begin and end are clamped (stride > 0: to
// [0, dim]; stride < 0: begin to [0, dim-1], end to [-1, dim-1]); the count is
// ceil((end-begin)/stride). A dim that selects nothing is an error (no zero-sized tensors).
Result<SliceSpec> slice_spec(const InferContext& ctx, const Dims& x, const std::string& x_label) {
  const Ints& begin = ctx.attr_ints("begin");
  const Ints& end = ctx.attr_ints("end");
  const Ints& axes_given = ctx.attr_ints("axes");
  const Ints& strides_given = ctx.attr_ints("strides");
  const int rank = static_cast<int>(x.size());
  if (begin.size() != end.size())
    return ctx.error(
        "attributes 'begin' {} and 'end' {} have {} and {} values, expected the same count",
        format_dims(begin), format_dims(end), begin.size(), end.size());
  if (!axes_given.empty() && axes_given.size() != begin.size())
    return ctx.error("attribute 'axes' {} has {} values, expected {} (one per 'begin' value)",
                     format_dims(axes_given), axes_given.size(), begin.size());
  if (!strides_given.empty() && strides_given.size() != begin.size())
    return ctx.error("attribute 'strides' {} has {} values, expected {} (one per 'begin' value)",
                     format_dims(strides_given), strides_given.size(), begin.size());
  if (axes_given.empty() && static_cast<int>(begin.size()) > rank)
    return ctx.error("attribute 'begin' {} has {} values, more than the rank {} of {}",
                     format_dims(begin), begin.size(), rank, x_label);
  SliceSpec s;
  s.begin.assign(rank, 0);
  s.end.assign(x.begin(), x.end());
  s.strides.assign(rank, 1);
  std::vector<bool> seen(rank, false);
  for (size_t k = 0; k < begin.size(); ++k) {
    const int64_t a = axes_given.empty() ? static_cast<int64_t>(k) : axes_given[k];
    std::optional<int> axis = normalize_axis(a, rank);
    if (!axis)
      return ctx.error(
          "attribute 'axes' {} has axis {}, out of range for {} of rank {} (expected {}..{})",
          format_dims(axes_given), a, x_label, rank, -rank, rank - 1);
    if (seen[*axis])
      return ctx.error("attribute 'axes' {} names axis {} twice", format_dims(axes_given), *axis);
    seen[*axis] = true;
    const int64_t step = strides_given.empty() ? 1 : strides_given[k];
    if (step == 0)
      return ctx.error("attribute 'strides' {} has a 0 at index {}", format_dims(strides_given), k);
    s.begin[*axis] = begin[k];
    s.end[*axis] = end[k];
    s.strides[*axis] = step;
  }
  s.dims.resize(rank);
  for (int d = 0; d < rank; ++d) {
    const int64_t n = x[d], step = s.strides[d];
    // Bounds are clamped before any arithmetic, so INT64_MIN/INT64_MAX cannot overflow.
    int64_t b = s.begin[d], e = s.end[d];
    if (b < 0) b = b < -n ? -1 : b + n;
    if (e < 0) e = e < -n ? -1 : e + n;
    int64_t count;
    if (step > 0) {
      b = std::clamp<int64_t>(b, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      count = e > b ? (e - b + step - 1) / step : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      count = b > e ? (b - e - step - 1) / -step : 0;
    }
    if (count == 0)
      return ctx.error(
          "slice of dim {} of {} {} is empty (begin {}, end {}, stride {}); "
          "zero-sized tensors are not allowed",
          d, x_label, format_dims(x), s.begin[d], s.end[d], step);
    const int64_t last = b + (count - 1) * step;
    s.begin[d] = b;
    s.end[d] = step > 0 ? last + 1 : (last == 0 ? std::numeric_limits<int64_t>::min() : last - 1);
    s.dims[d] = count;
  }
  return s;
}

void normalize_slice(InferContext& ctx, const SliceSpec& s) {
  Ints axes(s.dims.size());
  for (size_t d = 0; d < axes.size(); ++d) axes[d] = static_cast<int64_t>(d);
  ctx.normalize("axes", AttrValue(std::move(axes)));
  ctx.normalize("begin", AttrValue(s.begin));
  ctx.normalize("end", AttrValue(s.end));
  ctx.normalize("strides", AttrValue(s.strides));
}

// x -> y: x[begin:end:stride] on the given axes
Status infer_slice(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(0, 1));
  Result<SliceSpec> s = slice_spec(ctx, ctx.dims(0), ctx.label(0));
  if (!s.ok()) return s.status();
  normalize_slice(ctx, *s);
  ctx.add_output(ctx.input(0).dtype, s->dims);
  return Status();
}

// dy (the slice of `shape`) -> dx: shape, dy at the sliced positions, 0 elsewhere
Status infer_slice_grad(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(0, 1));
  const Ints& shape = ctx.attr_ints("shape");
  Result<SliceSpec> s =
      slice_spec(ctx, shape, fmt::format("attribute 'shape' {}", format_dims(shape)));
  if (!s.ok()) return s.status();
  if (s->dims != ctx.dims(0))
    return ctx.error("{} has dims {}, expected {} (the slice of attribute 'shape' {})",
                     ctx.label(0), format_dims(ctx.dims(0)), format_dims(s->dims),
                     format_dims(shape));
  normalize_slice(ctx, *s);
  ctx.add_output(ctx.input(0).dtype, shape);
  return Status();
}

// ---- pad and pad_grad -----------------------------------------------------------------------

// pads (ONNX order: every dim's begin, then every dim's end) against the dims `x` of the
// unpadded tensor; reflect mode needs each pad <= dim - 1 (a mirror that does not repeat the
// edge has dim - 1 cells to show).
Status check_pads(const InferContext& ctx, const Dims& x, const std::string& x_label,
                  bool reflect) {
  const Ints& pads = ctx.attr_ints("pads");
  const size_t rank = x.size();
  if (pads.size() != 2 * rank)
    return ctx.error(
        "attribute 'pads' {} has {} values, expected {} (begin then end for each of the "
        "{} dims of {}, as ONNX)",
        format_dims(pads), pads.size(), 2 * rank, rank, x_label);
  if (!reflect) return Status();
  for (size_t d = 0; d < rank; ++d)
    for (int side = 0; side < 2; ++side) {
      const int64_t p = pads[side * rank + d];
      if (p > x[d] - 1)
        return ctx.error(
            "reflect pad {} {} dim {} of {} {} is larger than dim - 1 = {} (a reflection "
            "cannot repeat the edge)",
            p, side == 0 ? "before" : "after", d, x_label, format_dims(x), x[d] - 1);
    }
  return Status();
}

// x -> y: x with pads[d] cells before and pads[rank+d] after on each dim d
Status infer_pad(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(0, 1));
  DLRT_OPS_RETURN_IF_ERROR(
      check_pads(ctx, ctx.dims(0), ctx.label(0), ctx.attr_string("mode") == "reflect"));
  const Ints& pads = ctx.attr_ints("pads");
  Dims y = ctx.dims(0);
  for (size_t d = 0; d < y.size(); ++d) y[d] += pads[d] + pads[y.size() + d];
  ctx.add_output(ctx.input(0).dtype, std::move(y));
  return Status();
}

// dy (reflect-padded) -> dx: dy without the pads, each padded cell added onto its mirror
Status infer_pad_grad(InferContext& ctx) {
  DLRT_OPS_RETURN_IF_ERROR(ctx.expect_min_rank(0, 1));
  const Ints& pads = ctx.attr_ints("pads");
  const Dims& dy = ctx.dims(0);
  if (pads.size() != 2 * dy.size())
    return ctx.error(
        "attribute 'pads' {} has {} values, expected {} (begin then end for each of the "
        "{} dims of {})",
        format_dims(pads), pads.size(), 2 * dy.size(), dy.size(), ctx.label(0));
  Dims x = dy;
  for (size_t d = 0; d < x.size(); ++d) {
    x[d] -= pads[d] + pads[x.size() + d];
    if (x[d] < 1)
      return ctx.error("attribute 'pads' {} leaves {} cells of dim {} of {} {}, expected >= 1",
                       format_dims(pads), x[d], d, ctx.label(0), format_dims(dy));
  }
  DLRT_OPS_RETURN_IF_ERROR(
      check_pads(ctx, x, fmt::format("the unpadded dx {}", format_dims(x)), true));
  ctx.add_output(ctx.input(0).dtype, std::move(x));
  return Status();
}

// ---- the table ------------------------------------------------------------------------------

const char* const kBackward = "it is a backward op, and dlrt differentiates to first order only";

std::vector<AttrSpec> slice_attrs() {
  return {required_attr("begin", DLRT_ATTR_INTS).describe("first index per sliced axis"),
          required_attr("end", DLRT_ATTR_INTS).describe("bound (excluded) per sliced axis"),
          optional_attr("axes", Ints{}).describe("the sliced axes; empty = 0, 1, ..."),
          optional_attr("strides", Ints{}).describe("step per sliced axis; empty = all 1")};
}
std::vector<AttrSpec> plus(std::vector<AttrSpec> a, AttrSpec b) {
  a.push_back(std::move(b));
  return a;
}
InputSpec variadic(InputSpec s, int min_count) {
  s.variadic = true;
  s.min_count = min_count;
  return s;
}
OutputSpec variadic(OutputSpec s) {
  s.variadic = true;
  return s;
}

}  // namespace

std::vector<OpDef> shape_ops() {
  const DtypeSet& A = kAllTypes;
  const DtypeSet& F = kFloatTypes;
  const AttrSpec pads = required_attr("pads", DLRT_ATTR_INTS)
                            .at_least(0)
                            .describe("begin for every dim, then end for every dim (ONNX)");
  return {
      OpDef{"concat",
            "reduce_shape",
            "inputs joined along axis (the other dims equal)",
            {variadic(in("x", A), 1)},
            {out("y")},
            {required_attr("axis", DLRT_ATTR_INT).describe("negative counts from the end")},
            infer_concat,
            {}}
          .sampled(samples::concat)
          .tol(kExact),
      OpDef{"split",
            "reduce_shape",
            "x cut along axis into parts of sizes, or num equal parts",
            {in("x", A)},
            {variadic(out("y"))},
            {optional_attr("axis", int64_t{0}),
             optional_attr("sizes", Ints{}).describe("part lengths, one may be -1"),
             optional_attr("num", int64_t{0}).at_least(0).describe("equal parts (when no sizes)")},
            infer_split,
            {}}
          .sampled(samples::split)
          .tol(kExact),
      OpDef{"slice",
            "reduce_shape",
            "x[begin:end:strides] on axes, as ONNX Slice",
            {in("x", A)},
            {out("y")},
            slice_attrs(),
            infer_slice,
            {}}
          .sampled(samples::slice)
          .tol(kExact),
      OpDef{"slice_grad",
            "reduce_shape",
            "dx of shape, dy at the sliced positions, 0 elsewhere",
            {in_const("dy", F)},
            {out("dx")},
            plus(slice_attrs(), required_attr("shape", DLRT_ATTR_INTS).at_least(1)),
            infer_slice_grad,
            {}}
          .sampled(samples::slice_grad)
          .gradient_free(kBackward)
          .tol(kExact),
      OpDef{"pad",
            "reduce_shape",
            "x framed by pads cells, constant value or reflection",
            {in("x", F)},
            {out("y")},
            {pads, optional_attr("mode", "constant").one_of({"constant", "reflect"}),
             optional_attr("value", 0.0).try_values({-1.5}).describe("constant mode's fill")},
            infer_pad,
            {}}
          .sampled(samples::pad)
          .tol(kExact),
      OpDef{"pad_grad",
            "reduce_shape",
            "reflect pad's adjoint: dy's interior plus each padded cell added onto its mirror",
            {in_const("dy", F)},
            {out("dx")},
            {pads},
            infer_pad_grad,
            {}}
          .sampled(samples::pad_grad)
          .gradient_free(kBackward)
          .tol(kReductionTol),
  };
}

}  // namespace dlrt::ops
