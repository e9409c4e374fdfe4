// convert_reduce.cc: ONNX's reductions, ArgMax/ArgMin, TopK and CumSum -> dlrt's. The axes
// come from the attribute (older opsets) or the constant second input (ReduceSum since 13,
// the others since 18).
#include <fmt/format.h>

#include "onnx_import/node_context.hpp"

namespace dlrt::onnx_import {
namespace {

// `kind`: the dlrt reduce op; pre/post: what is applied before and after (e.g. square, sqrt).
void reduce(ConverterTable& t, const char* onnx_op, const char* dlrt_op, int axes_input_since,
            const char* pre, const char* post, bool negate) {
  std::string maps = dlrt_op;
  if (pre != nullptr) maps = std::string(pre) + " + " + maps;
  if (post != nullptr) maps += std::string(" + ") + post;
  if (negate) maps = "neg + " + maps + " + neg";
  t.add(onnx_op, maps, [=](NodeContext& c) {
    const int64_t r = c.rank(0);
    std::vector<int64_t> axes;
    bool axes_given = false;
    if (c.opset() >= axes_input_since) {
      if (c.has_input(1)) {
        axes = c.require_host(1, "axes").as_int64s();
        axes_given = true;
      }
    } else if (c.has_attr("axes")) {
      axes = c.attr_ints("axes");
      axes_given = true;
    }
    const bool keepdims = c.attr_int("keepdims", 1) != 0;
    if ((!axes_given || axes.empty()) && c.attr_int("noop_with_empty_axes", 0) != 0)
      return c.set(0, c.op("copy", {c.value(0)}));
    if (axes.empty())
      for (int64_t k = 0; k < r; ++k) axes.push_back(k);
    for (int64_t& a : axes) a = c.axis(a, r);
    dlrt::Value x = c.value(0);
    if (negate) x = c.op("neg", {x});
    if (pre != nullptr) x = c.op(pre, {x});
    dlrt::Value y = c.op(dlrt_op, {x}, {{"axes", axes}, {"keepdims", keepdims}});
    if (post != nullptr) y = c.op(post, {y});
    if (negate) y = c.op("neg", {y});
    c.set(0, y);
  });
}

void arg(ConverterTable& t, const char* onnx_op, bool is_min) {
  t.add(onnx_op, is_min ? "neg + argmax" : "argmax", [is_min](NodeContext& c) {
    if (c.attr_int("select_last_index", 0) != 0) c.unsupported("select_last_index = 1");
    const std::vector<int64_t> d = c.dims(0);
    const int64_t a = c.axis(c.attr_int("axis", 0), static_cast<int64_t>(d.size()));
    dlrt::Value x = c.value(0);
    if (is_min) x = c.op("neg", {x});
    dlrt::Value y = c.op("argmax", {x}, {{"axis", a}, {"output_type", DLRT_I64}});
    if (c.attr_int("keepdims", 1) != 0) {
      std::vector<int64_t> out = d;
      out[a] = 1;
      y = c.reshape(y, out);
    }
    c.set(0, y);
  });
}

}  // namespace

void add_reduce_converters(ConverterTable& t) {
  reduce(t, "ReduceSum", "reduce_sum", 13, nullptr, nullptr, false);
  reduce(t, "ReduceMean", "reduce_mean", 18, nullptr, nullptr, false);
  reduce(t, "ReduceMax", "reduce_max", 18, nullptr, nullptr, false);
  reduce(t, "ReduceMin", "reduce_max", 18, nullptr, nullptr, true);
  reduce(t, "ReduceSumSquare", "reduce_sum", 18, "square", nullptr, false);
  reduce(t, "ReduceL2", "reduce_sum", 18, "square", "sqrt", false);
  reduce(t, "ReduceLogSumExp", "reduce_sum", 18, "exp", "log", false);
  arg(t, "ArgMax", false);
  arg(t, "ArgMin", true);
  t.add("TopK", "top_k (+ neg for smallest)", [](NodeContext& c) {
    const std::vector<int64_t> d = c.dims(0);
    const int64_t r = static_cast<int64_t>(d.size());
    if (c.axis(c.attr_int("axis", -1), r) != r - 1) c.unsupported("TopK along an axis but the last");
    const int64_t k = c.opset() < 10 ? c.attr_int("k", 1) : c.require_host(1, "K").as_int64s().at(0);
    const bool largest = c.attr_int("largest", 1) != 0;
    dlrt::Value x = c.value(0);
    if (!largest) x = c.op("neg", {x});
    std::vector<dlrt::Value> out = c.ops("top_k", {x}, {{"k", k}, {"sorted", c.attr_int("sorted", 1) != 0}}, 2);
    c.set(0, largest ? out[0] : c.op("neg", {out[0]}));
    c.set(1, out[1]);
  });
  t.add("CumSum", "cumsum", [](NodeContext& c) {
    const int64_t a = c.axis(c.require_host(1, "axis").as_int64s().at(0), c.rank(0));
    c.set(0, c.op("cumsum", {c.value(0)},
                  {{"axis", a}, {"exclusive", c.attr_int("exclusive", 0) != 0},
                   {"reverse", c.attr_int("reverse", 0) != 0}}));
  });
}

const ConverterTable& converters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    add_elementwise_converters(t);
    add_nn_converters(t);  // after elementwise: its Relu/Sigmoid/Tanh fuse into convs
    add_shape_converters(t);
    add_reduce_converters(t);
    add_more_converters(t);
    return t;
  }();
  return table;
}

}  // namespace dlrt::onnx_import
