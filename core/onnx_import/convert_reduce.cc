// convert_reduce.cc: ONNX's reductions, ArgMax/ArgMin, TopK and CumSum -> dlrt's. The axes
// come from the attribute (older opsets) or the constant second input (ReduceSum since 13,
// the others since 18).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "onnx_import/node_context.hpp"

namespace dlrt::onnx_import {
namespace {

// `kind`: the dlrt reduce op; pre/post: what is applied before and after (e.g. square, sqrt).
// The axes a Reduce* node reduces, normalised to [0, rank): the `axes` input (from opset
// `axes_input_since`) or attribute (before), every axis when none are given. False when none
// are given and noop_with_empty_axes is set: the node is then the identity.
bool reduced_axes(NodeContext& c, int axes_input_since, std::vector<int64_t>* axes) {
  const int64_t r = c.rank(0);
  axes->clear();
  bool given = false;
  if (c.opset() >= axes_input_since) {
    if (c.has_input(1)) {
      *axes = c.require_host(1, "axes").as_int64s();
      given = true;
    }
  } else if (c.has_attr("axes")) {
    *axes = c.attr_ints("axes");
    given = true;
  }
  if ((!given || axes->empty()) && c.attr_int("noop_with_empty_axes", 0) != 0) return false;
  if (axes->empty())
    for (int64_t k = 0; k < r; ++k) axes->push_back(k);
  for (int64_t& a : *axes) a = c.axis(a, r);
  return true;
}

void reduce(ConverterTable& t, const char* onnx_op, const char* dlrt_op, int axes_input_since,
            const char* pre, const char* post, bool negate) {
  std::string maps = dlrt_op;
  if (pre != nullptr) maps = std::string(pre) + " + " + maps;
  if (post != nullptr) maps += std::string(" + ") + post;
  if (negate) maps = "neg + " + maps + " + neg";
  t.add(onnx_op, maps, [=](NodeContext& c) {
    std::vector<int64_t> axes;
    if (!reduced_axes(c, axes_input_since, &axes)) return c.set(0, c.op("copy", {c.value(0)}));
    const bool keepdims = c.attr_int("keepdims", 1) != 0;
    dlrt::Value x = c.value(0);
    // ReduceMax/ReduceMin of bool, 8- or 16-bit values: in f32, which holds each of them (its
    // 24-bit significand), and cast back (a max only picks values: exact).
    const dlrt_dtype dtype = c.dtype(0);
    const bool narrow_int = std::string(dlrt_op) == "reduce_max" &&
                            (dtype == DLRT_BOOL || dtype == DLRT_U8 || dtype == DLRT_I8 ||
                             dtype == DLRT_U16 || dtype == DLRT_I16);
    if (narrow_int) x = c.op("cast", {x}, {{"dtype", DLRT_F32}});
    if (negate) x = c.op("neg", {x});
    if (pre != nullptr) x = c.op(pre, {x});
    dlrt::Value y = c.op(dlrt_op, {x}, {{"axes", axes}, {"keepdims", keepdims}});
    if (post != nullptr) y = c.op(post, {y});
    if (negate) y = c.op("neg", {y});
    if (narrow_int) y = c.op("cast", {y}, {{"dtype", dtype}});
    c.set(0, y);
  });
}

// ReduceProd: dlrt has no product reduction. Along each reduced axis the product is a tree of
// multiplies of the axis' two halves (an odd last cell carried on), log2(n) steps; the dims
// stay (keepdims) until the end. Rounding differs from a left-to-right product only in order.
void reduce_prod(ConverterTable& t) {
  t.add("ReduceProd", "slices + mul, a tree per reduced axis", [](NodeContext& c) {
    const std::vector<int64_t> d = c.dims(0);
    const int64_t r = static_cast<int64_t>(d.size());
    std::vector<int64_t> axes;
    if (!reduced_axes(c, 18, &axes)) return c.set(0, c.op("copy", {c.value(0)}));
    const bool keepdims = c.attr_int("keepdims", 1) != 0;
    auto cut = [&](dlrt::Value v, int64_t axis, int64_t b, int64_t e) {
      return c.op("slice", {v}, {{"begin", std::vector<int64_t>{b}}, {"end", std::vector<int64_t>{e}},
                                 {"axes", std::vector<int64_t>{axis}}});
    };
    dlrt::Value y = c.value(0);
    std::vector<int64_t> out = d;
    for (int64_t a : axes) {
      int64_t n = y.dims()[static_cast<size_t>(a)];
      while (n > 1) {
        const int64_t h = n / 2;
        dlrt::Value m = c.op("mul", {cut(y, a, 0, h), cut(y, a, h, 2 * h)});
        if (n % 2 == 1) m = c.op("concat", {m, cut(y, a, 2 * h, n)}, {{"axis", a}});
        y = m;
        n = h + n % 2;
      }
      out[static_cast<size_t>(a)] = 1;
    }
    if (y.dims() == d) y = c.op("copy", {y});  // nothing reduced (every reduced dim was 1)
    if (!keepdims) {
      std::vector<int64_t> kept;
      for (int64_t k = 0; k < r; ++k)
        if (std::find(axes.begin(), axes.end(), k) == axes.end()) kept.push_back(d[static_cast<size_t>(k)]);
      out = kept;
    }
    c.set(0, c.reshape(y, out));
  });
}

// ReduceLogSumExp, stable: log(sum(exp(x - m))) + m with m the max over the same axes, so
// no exp overflows (exp(x) is inf in f32 from x = 89) and the largest term is exp(0) = 1.
// Where m is not finite (a row of -inf, or one holding +inf), x - m would be NaN: m is taken
// as 0 there, which gives what log(sum(exp(x))) gives (-inf, +inf).
void reduce_log_sum_exp(ConverterTable& t) {
  t.add("ReduceLogSumExp", "reduce_max, sub, exp, reduce_sum, log, add (max-subtracted)",
        [](NodeContext& c) {
          std::vector<int64_t> axes;
          if (!reduced_axes(c, 18, &axes)) return c.set(0, c.op("copy", {c.value(0)}));
          const bool keepdims = c.attr_int("keepdims", 1) != 0;
          const dlrt_dtype dt = c.dtype(0);
          dlrt::Value x = c.value(0);
          dlrt::Value m = c.op("reduce_max", {x}, {{"axes", axes}, {"keepdims", true}});
          m = c.op("where", {c.op("less", {m, c.scalar(dt, INFINITY)}), m, c.scalar(dt, 0.0)});
          m = c.op("where", {c.op("greater", {m, c.scalar(dt, -INFINITY)}), m, c.scalar(dt, 0.0)});
          dlrt::Value e = c.op("exp", {c.op("sub", {x, m})});
          dlrt::Value y = c.op("log", {c.op("reduce_sum", {e}, {{"axes", axes}, {"keepdims", true}})});
          y = c.op("add", {y, m});
          if (!keepdims) {
            std::vector<int64_t> out;
            for (int64_t k = 0; k < c.rank(0); ++k)
              if (std::find(axes.begin(), axes.end(), k) == axes.end())
                out.push_back(c.dims(0)[static_cast<size_t>(k)]);
            y = c.reshape(y, out);
          }
          c.set(0, y);
        });
}

void arg(ConverterTable& t, const char* onnx_op, bool is_min) {
  t.add(onnx_op, is_min ? "neg + argmax (select_last_index: on the reversed axis)" : "argmax (select_last_index: on the reversed axis)", [is_min](NodeContext& c) {
    const std::vector<int64_t> d = c.dims(0);
    const int64_t a = c.axis(c.attr_int("axis", 0), static_cast<int64_t>(d.size()));
    const bool last = c.attr_int("select_last_index", 0) != 0;
    dlrt::Value x = c.value(0);
    if (is_min) x = c.op("neg", {x});
    dlrt::Value y;
    if (!last) {
      y = c.op("argmax", {x}, {{"axis", a}, {"output_type", DLRT_I64}});
    } else {
      // The last max is the first max of the axis reversed, at n-1-i (in i64: exact).
      const int64_t n = d[static_cast<size_t>(a)];
      dlrt::Value rev = c.op("slice", {x}, {{"begin", std::vector<int64_t>{n - 1}},
                                            {"end", std::vector<int64_t>{std::numeric_limits<int64_t>::min()}},
                                            {"axes", std::vector<int64_t>{a}},
                                            {"strides", std::vector<int64_t>{-1}}});
      dlrt::Value i = c.op("argmax", {rev}, {{"axis", a}, {"output_type", DLRT_I64}});
      y = c.op("sub", {c.scalar(DLRT_I64, static_cast<double>(n - 1)), i});
    }
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
  reduce_log_sum_exp(t);
  reduce(t, "ReduceL1", "reduce_sum", 18, "abs", nullptr, false);
  reduce(t, "ReduceLogSum", "reduce_sum", 18, nullptr, "log", false);
  reduce_prod(t);
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
    add_loss_converters(t);
    add_generator_converters(t);
    add_rnn_converters(t);
    add_quantize_converters(t);
    add_scatter_converters(t);
    add_einsum_converters(t);
    return t;
  }();
  return table;
}

}  // namespace dlrt::onnx_import
