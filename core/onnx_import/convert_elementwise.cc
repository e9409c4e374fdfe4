// convert_elementwise.cc: ONNX's elementwise ops -> dlrt's (docs/onnx.md lists the mapping).
// Unary ops map one to one; binary ops broadcast as NumPy, as dlrt's do; variadic Sum/Max/Min/
// Mean chain the binary op. With every input a small constant, the result is folded on the host.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "onnx_import/host_fold.hpp"
#include "onnx_import/node_context.hpp"

namespace dlrt::onnx_import {
namespace {

bool is_float(dlrt_dtype d) { return d == DLRT_F32 || d == DLRT_F16 || d == DLRT_BF16 || d == DLRT_F64; }

bool all_small_hosts(NodeContext& c) {
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) continue;
    const HostTensor* h = c.host(i);
    if (h == nullptr || h->element_count() > kMaxFoldElements || h->dtype == DLRT_F16 ||
        h->dtype == DLRT_BF16)
      return false;
  }
  return true;
}

void unary(ConverterTable& t, const char* onnx_op, const char* dlrt_op,
           double (*fold)(double) = nullptr) {
  t.add(onnx_op, dlrt_op, [dlrt_op, fold](NodeContext& c) {
    if (fold != nullptr && all_small_hosts(c)) {
      c.set_host(0, host_unary(*c.host(0), c.dtype(0), fold));
      return;
    }
    c.set(0, c.op(dlrt_op, {c.value(0)}));
  });
}

using Fold2 = double (*)(double, double);

// One input the NCHW view of an NHWC value (a Conv's output, importer.cc) and the other a
// constant that is one number per channel or one for all: dims (C,1,1), (1,C,1,1), (1,1,1) or
// a scalar (NumPy aligns dims from the right, so a plain (C) runs along W and does not
// qualify). The op then runs on the NHWC value with the constant as (C) or (1), and hands on
// an NCHW view again. This keeps
// a BatchNormalization exported as its scale and shift (Conv -> Mul -> Add -> Relu, as
// densenet's light model has it 120 times) in NHWC, where it cost two transposes a layer and
// left the pools after it NCHW. nullopt where the pattern does not hold.
std::optional<Slot> on_nhwc_per_channel(NodeContext& c, const char* dlrt_op) {
  for (size_t v = 0; v < 2; ++v) {
    const size_t k = 1 - v;  // the constant's input
    const std::optional<dlrt::Value> src = nhwc_source(c, v);
    const HostTensor* h = c.host(k);
    if (!src || h == nullptr || h->dims.size() > 4) continue;
    std::vector<int64_t> d = h->dims;  // right-aligned against (N,C,H,W), as NumPy broadcasts
    d.insert(d.begin(), 4 - d.size(), 1);
    const int64_t channels = c.dims(v)[1];
    if (d[0] != 1 || d[2] != 1 || d[3] != 1 || (d[1] != 1 && d[1] != channels)) continue;
    HostTensor per_channel = *h;
    per_channel.dims = {d[1]};
    const dlrt::Value k_value = c.constant(per_channel);
    return nchw_view(c, v == 0 ? c.op(dlrt_op, {*src, k_value}) : c.op(dlrt_op, {k_value, *src}));
  }
  return std::nullopt;
}

// `int_fold` (optional): the host fold for integer inputs, where it differs from the float one
// (Div: IEEE's x/0 for floats, the device kernels' 0 for integers).
void binary(ConverterTable& t, const char* onnx_op, const char* dlrt_op, Fold2 fold,
            bool is_compare, Fold2 int_fold = nullptr) {
  t.add(onnx_op, dlrt_op, [dlrt_op, fold, is_compare, int_fold](NodeContext& c) {
    const dlrt_dtype out_dtype = is_compare ? DLRT_BOOL : c.dtype(0);
    if (c.dtype(0) != c.dtype(1))
      c.invalid(fmt::format("inputs have dtypes {} and {}; ONNX wants one", dlrt_dtype_name(c.dtype(0)),
                            dlrt_dtype_name(c.dtype(1))));
    if (fold != nullptr && all_small_hosts(c)) {
      const Fold2 f = int_fold != nullptr && !is_float(c.dtype(0)) ? int_fold : fold;
      c.set_host(0, host_binary(*c.host(0), *c.host(1), out_dtype, f));
      return;
    }
    if (!is_compare && c.dims(0) == c.dims(1)) {  // two NCHW views of NHWC values
      std::optional<dlrt::Value> a = nhwc_source(c, 0), b = nhwc_source(c, 1);
      if (a && b) return c.set_slot(0, nchw_view(c, c.op(dlrt_op, {*a, *b})));
    }
    if (!is_compare)
      if (std::optional<Slot> s = on_nhwc_per_channel(c, dlrt_op)) return c.set_slot(0, *s);
    c.set(0, c.op(dlrt_op, {c.value(0), c.value(1)}));
  });
}

void variadic(ConverterTable& t, const char* onnx_op, const char* dlrt_op, Fold2 fold, bool mean) {
  t.add(onnx_op, std::string("chain of ") + dlrt_op, [dlrt_op, fold, mean](NodeContext& c) {
    if (all_small_hosts(c)) {
      HostTensor acc = *c.host(0);
      for (size_t i = 1; i < c.num_inputs(); ++i) acc = host_binary(acc, *c.host(i), acc.dtype, fold);
      if (mean)
        acc = host_binary(acc, HostTensor::from_doubles(acc.dtype, {double(c.num_inputs())}, {}),
                          acc.dtype, [](double a, double b) { return a / b; });
      c.set_host(0, acc);
      return;
    }
    // Every input the NCHW view of an NHWC value of the same dims: add the NHWC values.
    bool nhwc = c.num_inputs() > 1;
    std::vector<dlrt::Value> srcs;
    for (size_t i = 0; nhwc && i < c.num_inputs(); ++i) {
      std::optional<dlrt::Value> s = nhwc_source(c, i);
      nhwc = s.has_value() && c.dims(i) == c.dims(0);
      if (nhwc) srcs.push_back(*s);
    }
    if (nhwc && !mean) {
      dlrt::Value acc = srcs[0];
      for (size_t i = 1; i < srcs.size(); ++i) acc = c.op(dlrt_op, {acc, srcs[i]});
      return c.set_slot(0, nchw_view(c, acc));
    }
    dlrt::Value acc = c.value(0);
    for (size_t i = 1; i < c.num_inputs(); ++i) acc = c.op(dlrt_op, {acc, c.value(i)});
    if (mean) acc = c.op("div", {acc, c.scalar(c.dtype(0), static_cast<double>(c.num_inputs()))});
    // One input: the output is still its own value (a copy), as ONNX makes a new tensor.
    if (c.num_inputs() == 1) acc = c.op("copy", {acc});
    c.set(0, acc);
  });
}

}  // namespace

void add_elementwise_converters(ConverterTable& t) {
  unary(t, "Relu", "relu", [](double x) { return x > 0 ? x : 0.0; });
  unary(t, "Sigmoid", "sigmoid");
  unary(t, "Tanh", "tanh");
  unary(t, "Exp", "exp");
  unary(t, "Log", "log");
  unary(t, "Sqrt", "sqrt", [](double x) { return std::sqrt(x); });
  unary(t, "Abs", "abs", [](double x) { return std::fabs(x); });
  unary(t, "Neg", "neg", [](double x) { return -x; });
  unary(t, "Softplus", "softplus");
  unary(t, "HardSwish", "hard_swish");
  // The unary maths (core/ops/infer_math.cc), folded on the host for small constants (the
  // window functions' expansions compute cosines of constant ranges).
  unary(t, "Sin", "sin", [](double x) { return std::sin(x); });
  unary(t, "Cos", "cos", [](double x) { return std::cos(x); });
  unary(t, "Tan", "tan", [](double x) { return std::tan(x); });
  unary(t, "Asin", "asin", [](double x) { return std::asin(x); });
  unary(t, "Acos", "acos", [](double x) { return std::acos(x); });
  unary(t, "Atan", "atan", [](double x) { return std::atan(x); });
  unary(t, "Sinh", "sinh", [](double x) { return std::sinh(x); });
  unary(t, "Cosh", "cosh", [](double x) { return std::cosh(x); });
  unary(t, "Asinh", "asinh", [](double x) { return std::asinh(x); });
  unary(t, "Acosh", "acosh", [](double x) { return std::acosh(x); });
  unary(t, "Atanh", "atanh", [](double x) { return std::atanh(x); });
  unary(t, "Erf", "erf", [](double x) { return std::erf(x); });
  unary(t, "Ceil", "ceil", [](double x) { return std::ceil(x); });
  unary(t, "Floor", "floor", [](double x) { return std::floor(x); });
  unary(t, "Round", "round", [](double x) { return std::nearbyint(x); });  // halves to even
  unary(t, "Sign", "sign", [](double x) { return std::isnan(x) ? x : double((x > 0) - (x < 0)); });

  t.add("Elu", "elu", [](NodeContext& c) {
    c.set(0, c.op("elu", {c.value(0)}, {{"alpha", static_cast<double>(c.attr_float("alpha", 1.0f))}}));
  });
  t.add("LeakyRelu", "leaky_relu", [](NodeContext& c) {
    c.set(0, c.op("leaky_relu", {c.value(0)},
                  {{"alpha", static_cast<double>(c.attr_float("alpha", 0.01f))}}));
  });
  t.add("Gelu", "gelu", [](NodeContext& c) {
    c.set(0, c.op("gelu", {c.value(0)}, {{"approximate", c.attr_string("approximate", "none")}}));
  });
  t.add("Mish", "x * tanh(softplus(x))", [](NodeContext& c) {
    dlrt::Value x = c.value(0);
    c.set(0, c.op("mul", {x, c.op("tanh", {c.op("softplus", {x})})}));
  });
  // Swish (opset 24): x * sigmoid(alpha x); SwiGLU (opset 28): Swish(A) * B, A and B of one
  // shape (no broadcasting, by the spec).
  auto swish = [](NodeContext& c, dlrt::Value x) {
    const double alpha = c.attr_float("alpha", 1.0f);
    dlrt::Value ax = alpha == 1.0 ? x : c.op("mul", {x, c.scalar(c.dtype(0), alpha)});
    return c.op("mul", {x, c.op("sigmoid", {ax})});
  };
  t.add("Swish", "x * sigmoid(alpha x)", [swish](NodeContext& c) { c.set(0, swish(c, c.value(0))); });
  t.add("SwiGLU", "a * sigmoid(alpha a) * b", [swish](NodeContext& c) {
    if (c.dims(0) != c.dims(1))
      c.invalid(fmt::format("A is ({}) and B is ({}); SwiGLU wants one shape",
                            fmt::join(c.dims(0), ","), fmt::join(c.dims(1), ",")));
    c.set(0, c.op("mul", {swish(c, c.value(0)), c.value(1)}));
  });
  // Celu: max(0, x) + min(0, alpha (exp(x / alpha) - 1)).
  t.add("Celu", "elu(x / alpha) * alpha", [](NodeContext& c) {
    const double alpha = c.attr_float("alpha", 1.0f);
    if (alpha == 1.0) return c.set(0, c.op("elu", {c.value(0)}, {{"alpha", 1.0}}));
    dlrt::Value x = c.op("div", {c.value(0), c.scalar(c.dtype(0), alpha)});
    c.set(0, c.op("mul", {c.op("elu", {x}, {{"alpha", 1.0}}), c.scalar(c.dtype(0), alpha)}));
  });
  // Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
  t.add("Shrink", "where(x < -lambd, x + bias, where(x > lambd, x - bias, 0))", [](NodeContext& c) {
    const double lambd = c.attr_float("lambd", 0.5f), bias = c.attr_float("bias", 0.0f);
    const dlrt_dtype d = c.dtype(0);
    dlrt::Value x = c.value(0);
    dlrt::Value hi = c.op("where", {c.op("greater", {x, c.scalar(d, lambd)}),
                                    c.op("sub", {x, c.scalar(d, bias)}), c.scalar(d, 0.0)});
    c.set(0, c.op("where", {c.op("less", {x, c.scalar(d, -lambd)}), c.op("add", {x, c.scalar(d, bias)}), hi}));
  });
  t.add("Reciprocal", "div(1, x)", [](NodeContext& c) {
    c.set(0, c.op("div", {c.scalar(c.dtype(0), 1.0), c.value(0)}));
  });
  t.add("Softsign", "div(x, add(abs(x), 1))", [](NodeContext& c) {
    dlrt::Value x = c.value(0);
    c.set(0, c.op("div", {x, c.op("add", {c.op("abs", {x}), c.scalar(c.dtype(0), 1.0)})}));
  });
  t.add("HardSigmoid", "clip(alpha x + beta, 0, 1)", [](NodeContext& c) {
    const double alpha = c.attr_float("alpha", 0.2f), beta = c.attr_float("beta", 0.5f);
    dlrt::Value y = c.op("add", {c.op("mul", {c.value(0), c.scalar(c.dtype(0), alpha)}),
                                 c.scalar(c.dtype(0), beta)});
    c.set(0, c.op("clip", {y}, {{"min", 0.0}, {"max", 1.0}}));
  });
  t.add("PRelu", "where(x > 0, x, x * slope)", [](NodeContext& c) {
    dlrt::Value x = c.value(0), s = c.value(1);
    dlrt::Value pos = c.op("greater", {x, c.scalar(c.dtype(0), 0.0)});
    c.set(0, c.op("where", {pos, x, c.op("mul", {x, s})}));
  });
  t.add("Clip", "clip (integers: maximum, minimum)", [](NodeContext& c) {
    // Integers: min(max(x, lo), hi) with the bounds as given (exact in any integer type;
    // min > max gives max, as ONNX and NumPy's clip).
    if (!is_float(c.dtype(0)) && c.opset() >= 11) {
      dlrt::Value y = c.value(0);
      if (c.has_input(1)) y = c.op("maximum", {y, c.value(1)});
      if (c.has_input(2)) y = c.op("minimum", {y, c.value(2)});
      if (!c.has_input(1) && !c.has_input(2)) y = c.op("copy", {y});
      return c.set(0, y);
    }
    double lo = -INFINITY, hi = INFINITY;
    if (c.opset() < 11) {
      lo = c.attr_float("min", -INFINITY);
      hi = c.attr_float("max", INFINITY);
    } else {
      if (c.has_input(1)) lo = c.require_host(1, "min").as_doubles().at(0);
      if (c.has_input(2)) hi = c.require_host(2, "max").as_doubles().at(0);
    }
    if (!is_float(c.dtype(0))) c.unsupported("Clip of an integer tensor (dlrt's clip takes floats)");
    c.set(0, c.op("clip", {c.value(0)}, {{"min", lo}, {"max", hi}}));
  });

  binary(t, "Add", "add", [](double a, double b) { return a + b; }, false);
  binary(t, "Sub", "sub", [](double a, double b) { return a - b; }, false);
  binary(t, "Mul", "mul", [](double a, double b) { return a * b; }, false);
  binary(
      t, "Div", "div", [](double a, double b) { return a / b; }, false,
      [](double a, double b) { return b == 0 ? 0.0 : a / b; });
  // Pow's exponent may have another type than its base (ONNX 12+): cast to the base's.
  t.add("Pow", "pow (exponent cast to the base's dtype)", [](NodeContext& c) {
    if (all_small_hosts(c) && c.dtype(0) == c.dtype(1)) {
      c.set_host(0, host_binary(*c.host(0), *c.host(1), c.dtype(0),
                                [](double a, double b) { return std::pow(a, b); }));
      return;
    }
    dlrt::Value e = c.value(1);
    if (c.dtype(1) != c.dtype(0)) e = c.op("cast", {e}, {{"dtype", c.dtype(0)}});
    c.set(0, c.op("pow", {c.value(0), e}));
  });
  // Mod: folded on the host when constant (shape arithmetic: an exported attention's heads %
  // groups). Integer graph values: r = a - (a / b) * b with dlrt's integer div (truncating,
  // so r has a's sign: C's %, fmod = 1); fmod = 0 (Python's %) adds b where r and b have
  // opposite signs (r != 0); a zero divisor gives 0, as NumPy does. Floats need an fmod dlrt
  // lacks (a - trunc(a / b) * b is not exact in floating point).
  t.add("Mod", "div, mul, sub (integers; + sign fix-up for fmod = 0)", [](NodeContext& c) {
    if (c.dtype(0) != c.dtype(1))
      c.invalid(fmt::format("inputs have dtypes {} and {}; ONNX wants one", dlrt_dtype_name(c.dtype(0)),
                            dlrt_dtype_name(c.dtype(1))));
    const bool fmod = c.attr_int("fmod", 0) != 0;
    // Opset 28 allows fmod = 0 for floats (a - floor(a / b) * b, with IEEE special cases);
    // dlrt has no exact floor-modulo, so it says so rather than round differently.
    if (!fmod && is_float(c.dtype(0))) {
      if (c.opset() >= 28) c.unsupported("Mod of floats with fmod = 0 (opset 28's floor modulo)");
      c.invalid("Mod of floats needs fmod = 1");
    }
    if (!all_small_hosts(c) && !is_float(c.dtype(0))) {
      const dlrt_dtype dt = c.dtype(0);
      dlrt::Value a = c.value(0), b = c.value(1);
      dlrt::Value r = c.op("sub", {a, c.op("mul", {c.op("div", {a, b}), b})});
      // Unsigned r and b are never of opposite signs: both %s are the same there.
      const bool is_unsigned = dt == DLRT_U8 || dt == DLRT_U16 || dt == DLRT_U32 || dt == DLRT_U64;
      if (!fmod && !is_unsigned) {
        // sign(v) in i8 (-1, 0, 1) from two comparisons; r and b differ in sign where the
        // product of their signs is negative (never when r = 0).
        auto sign = [&](dlrt::Value v) {
          dlrt::Value pos = c.op("cast", {c.op("greater", {v, c.scalar(dt, 0.0)})}, {{"dtype", DLRT_I8}});
          dlrt::Value neg = c.op("cast", {c.op("less", {v, c.scalar(dt, 0.0)})}, {{"dtype", DLRT_I8}});
          return c.op("sub", {pos, neg});
        };
        dlrt::Value opposite = c.op("less", {c.op("mul", {sign(r), sign(b)}), c.scalar(DLRT_I8, 0.0)});
        r = c.op("where", {opposite, c.op("add", {r, b}), r});
      }
      // a % 0 = 0: the div gave 0, so r is a there.
      r = c.op("where", {c.op("equal", {b, c.scalar(dt, 0.0)}), c.scalar(dt, 0.0), r});
      return c.set(0, r);
    }
    if (!all_small_hosts(c)) c.unsupported("Mod of float graph values (dlrt has no fmod op; only constants fold)");
    // Integers are exact in double below 2^53; fmod = 0 takes the divisor's sign (Python's %),
    // fmod = 1 the dividend's (C's fmod). An integer zero divisor gives 0, as NumPy does; a
    // float one NaN.
    const bool integer = !is_float(c.dtype(0));
    c.set_host(0, host_binary(*c.host(0), *c.host(1), c.dtype(0), [fmod, integer](double a, double b) {
      if (b == 0 && integer) return 0.0;
      double r = std::fmod(a, b);
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }));
  });
  binary(t, "Equal", "equal", [](double a, double b) { return a == b ? 1.0 : 0.0; }, true);
  binary(t, "Less", "less", [](double a, double b) { return a < b ? 1.0 : 0.0; }, true);
  binary(t, "LessOrEqual", "less_equal", [](double a, double b) { return a <= b ? 1.0 : 0.0; }, true);
  binary(t, "Greater", "greater", [](double a, double b) { return a > b ? 1.0 : 0.0; }, true);
  binary(t, "GreaterOrEqual", "greater_equal", [](double a, double b) { return a >= b ? 1.0 : 0.0; },
         true);
  variadic(t, "Sum", "add", [](double a, double b) { return a + b; }, false);
  variadic(t, "Mean", "add", [](double a, double b) { return a + b; }, true);
  variadic(t, "Max", "maximum", [](double a, double b) { return std::max(a, b); }, false);
  variadic(t, "Min", "minimum", [](double a, double b) { return std::min(a, b); }, false);

  t.add("Where", "where", [](NodeContext& c) {
    if (c.dtype(1) != c.dtype(2))
      c.invalid(fmt::format("x and y have dtypes {} and {}; ONNX wants one", dlrt_dtype_name(c.dtype(1)),
                            dlrt_dtype_name(c.dtype(2))));
    const HostTensor *k = c.host(0), *x = c.host(1), *y = c.host(2);
    if (k && x && y && k->element_count() <= kMaxFoldElements && x->element_count() <= kMaxFoldElements &&
        y->element_count() <= kMaxFoldElements)
      return c.set_host(0, host_where(*k, *x, *y));
    c.set(0, c.op("where", {c.value(0), c.value(1), c.value(2)}));
  });
}

}  // namespace dlrt::onnx_import
