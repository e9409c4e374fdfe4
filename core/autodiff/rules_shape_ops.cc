// rules_shape_ops.cc: gradient rules of the ops that cut, join and frame tensors (concat,
// split, slice, pad) and of the global pools.
//
// The forward attributes are the registry's normalised ones (infer_shape_ops.cc): axis in
// 0..rank-1, split's sizes spelled out, slice's begin/end/strides on every axis.
#include "rules.hpp"

namespace dlrt::core::autodiff {
namespace {

ops::Ints dims_as_ints(const ops::Dims& d) { return ops::Ints(d.begin(), d.end()); }

// y = concat(x0, x1, ...; axis): dx_i is the slice of dy that x_i filled, [off_i, off_i + d_i)
// on axis.
void concat_rule(GradContext& c) {
  const int64_t axis = c.attr("axis").as_int();
  int64_t offset = 0;
  for (size_t i = 0; i < c.node().inputs.size(); ++i) {
    const int64_t len = c.in_dims(int(i))[axis];
    if (c.needs(int(i)))
      c.set_dx(int(i), c.emit("slice", "dx", {*c.dy(0)},
                              {{"axes", ops::Ints{axis}},
                               {"begin", ops::Ints{offset}},
                               {"end", ops::Ints{offset + len}}}));
    offset += len;
  }
}

// y0, y1, ... = split(x; axis, sizes): dx = concat(dy0, dy1, ...), zeros for a part no
// gradient reached.
void split_rule(GradContext& c) {
  std::vector<ValueRef> parts;
  for (size_t k = 0; k < c.node().outputs.size(); ++k) parts.push_back(c.dy_or_zeros(int(k)));
  c.set_dx(0, c.emit("concat", "dx", parts, {{"axis", c.attr("axis")}}));
}

// y = slice(x; begin, end, strides): dx = dy scattered back into zeros of x's shape.
void slice_rule(GradContext& c) {
  ops::AttrMap a = c.attrs();
  a["shape"] = dims_as_ints(c.in_dims(0));
  c.set_dx(0, c.emit("slice_grad", "dx", {*c.dy(0)}, a));
}

// y = pad(x; pads, mode): constant mode copies x into the middle of y, so dx is that middle
// slice of dy; reflect mode also copies x's cells into the border, so pad_grad adds those back.
void pad_rule(GradContext& c) {
  const ops::Ints& pads = c.attr("pads").as_ints();
  if (c.attr("mode").as_string() == "reflect") {
    c.set_dx(0, c.emit("pad_grad", "dx", {*c.dy(0)}, {{"pads", pads}}));
    return;
  }
  const ops::Dims& x = c.in_dims(0);
  ops::Ints begin(x.size()), end(x.size());
  for (size_t d = 0; d < x.size(); ++d) {
    begin[d] = pads[d];
    end[d] = pads[d] + x[d];
  }
  c.set_dx(0, c.emit("slice", "dx", {*c.dy(0)}, {{"begin", begin}, {"end", end}}));
}

// y = mean of x over H, W: dx = dy / (H*W) at every cell.
void global_avg_pool2d_rule(GradContext& c) {
  ops::AttrMap a = c.attrs();
  a["input_shape"] = dims_as_ints(c.in_dims(0));
  c.set_dx(0, c.emit("global_avg_pool2d_backward", "backward", {*c.dy(0)}, a));
}

// y = max of x over H, W: dx = dy at the first max of each plane, 0 elsewhere.
void global_max_pool2d_rule(GradContext& c) {
  c.set_dx(0, c.emit("global_max_pool2d_backward", "backward", {c.input(0), *c.dy(0)}, c.attrs()));
}

}  // namespace

void add_shape_op_rules(RuleTable& t) {
  t["concat"] = concat_rule;
  t["split"] = split_rule;
  t["slice"] = slice_rule;
  t["pad"] = pad_rule;
  t["global_avg_pool2d"] = global_avg_pool2d_rule;
  t["global_max_pool2d"] = global_max_pool2d_rule;
}

}  // namespace dlrt::core::autodiff
