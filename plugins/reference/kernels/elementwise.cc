// elementwise.cc: element-wise ops: the activations relu/leaky_relu/sigmoid/tanh and their
// gradients, neg/exp/log/sqrt, the unary maths (sin ... sign), add/sub/mul/div/maximum/minimum/pow with NumPy broadcasting, and
// bias_add (NHWC: along the last dim; NCHW: along dim 1). (The other activations: activation.cc;
// comparisons and where: compare.cc.) Each output element reads only its own input elements,
// so all of these are safe when the output aliases an input of the same shape.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

// ---- unary -------------------------------------------------------------------------------

// One unary op: y = fn(x, alpha), alpha being leaky_relu's slope below 0 (its attribute; the
// other ops ignore it). One row per op: run_unary looks its row up by name and the
// registration at the end adds a kernel per row.
struct Unary {
  const char* name;
  double (*fn)(double x, double alpha);
};

const Unary kUnary[] = {
    {"relu", [](double x, double) { return relu(x); }},
    {"leaky_relu", [](double x, double alpha) { return x > 0.0 ? x : alpha * x; }},
    {"sigmoid", [](double x, double) { return sigmoid(x); }},
    {"tanh", [](double x, double) { return std::tanh(x); }},
    {"neg", [](double x, double) { return -x; }},
    {"exp", [](double x, double) { return std::exp(x); }},
    {"log", [](double x, double) { return std::log(x); }},    // NaN for x < 0, -inf for 0 (IEEE)
    {"sqrt", [](double x, double) { return std::sqrt(x); }},  // NaN for x < 0
    // core/ops/infer_math.cc's ops (the C library's IEEE domains: NaN outside them).
    {"sin", [](double x, double) { return std::sin(x); }},
    {"cos", [](double x, double) { return std::cos(x); }},
    {"tan", [](double x, double) { return std::tan(x); }},
    {"asin", [](double x, double) { return std::asin(x); }},
    {"acos", [](double x, double) { return std::acos(x); }},
    {"atan", [](double x, double) { return std::atan(x); }},
    {"sinh", [](double x, double) { return std::sinh(x); }},
    {"cosh", [](double x, double) { return std::cosh(x); }},
    {"asinh", [](double x, double) { return std::asinh(x); }},
    {"acosh", [](double x, double) { return std::acosh(x); }},
    {"atanh", [](double x, double) { return std::atanh(x); }},
    {"erf", [](double x, double) { return std::erf(x); }},
    {"ceil", [](double x, double) { return std::ceil(x); }},
    {"floor", [](double x, double) { return std::floor(x); }},
    // The default rounding mode: halves to even.
    {"round", [](double x, double) { return std::nearbyint(x); }},
    {"sign", [](double x, double) { return std::isnan(x) ? x
                                           : x > 0       ? 1.0
                                           : x < 0       ? -1.0
                                                         : 0.0; }},
};

// x: any shape -> y: same shape
void run_unary(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const double alpha = op.has("alpha") ? op.get_float("alpha") : 0.0;
  double (*fn)(double, double) = kUnary[0].fn;
  for (const Unary& u : kUnary)
    if (op.name() == u.name) fn = u.fn;
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in[0]);
    T* y = static_cast<T*>(out[0]);
    for (int64_t i = 0; i < op.input(0).numel; ++i) y[i] = static_cast<T>(fn(double(x[i]), alpha));
  });
}

// ---- binary with broadcasting ------------------------------------------------------------

double binary(char op, double a, double b) {
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    // maximum, minimum: NaN if either is NaN (NumPy's and PyTorch's maximum/minimum).
    case 'M':
      return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
    case 'm':
      return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
    case '^':
      return std::pow(a, b);  // NaN for a < 0 and a non-integer b; 0 ** negative is inf
    default:
      return a / b;  // IEEE: x/0 is +-inf or NaN
  }
}

// Integers (add, sub, mul, div, maximum, minimum; the schema admits no others): in their own
// type, sums, differences and products wrapping modulo 2^bits, computed in an unsigned type
// where C++ defines the wrap (NumPy's integer arithmetic); quotients truncated toward zero,
// x / 0 = 0, and the lowest value / -1 (whose quotient does not fit) wraps to itself
// (plugins/common/dtype_dispatch.hpp, shared with the cpu plugin).
template <typename T>
T integer_binary(char op, T a, T b) {
  switch (op) {
    case '+':
      return plugin::wrapping_add(a, b);
    case '-':
      return plugin::wrapping_sub(a, b);
    case '*':
      return plugin::wrapping_mul(a, b);
    case 'M':
      return std::max(a, b);
    case 'm':
      return std::min(a, b);
    default:  // '/'
      return plugin::integer_quotient(a, b);
  }
}

// add, sub, mul, div, maximum, minimum take integers too; pow floats only.
void check_numeric(const OpView& op) { expect_numeric(op, op.input(0), "input 0"); }

char binary_symbol(const std::string& op) {
  return op == "add"       ? '+'
         : op == "sub"     ? '-'
         : op == "mul"     ? '*'
         : op == "maximum" ? 'M'
         : op == "minimum" ? 'm'
         : op == "pow"     ? '^'
                           : '/';
}

// a: A, b: B -> c: broadcast(A, B); c[idx] = a[idx . sa] (op) b[idx . sb], stretched dims stride 0
void run_binary(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const auto& dims = op.output(0).dims;
  const auto sa = plugin::broadcast_strides(op.input(0).dims, dims, op.name());
  const auto sb = plugin::broadcast_strides(op.input(1).dims, dims, op.name());
  const char sym = binary_symbol(op.name());
  with_numeric(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* a = static_cast<const T*>(in[0]);
    const T* b = static_cast<const T*>(in[1]);
    T* c = static_cast<T*>(out[0]);
    for (int64_t i = 0; i < op.output(0).numel; ++i) {
      int64_t rem = i, ia = 0, ib = 0;
      for (size_t d = dims.size(); d-- > 0;) {
        int64_t coord = rem % dims[d];
        rem /= dims[d];
        ia += coord * sa[d];
        ib += coord * sb[d];
      }
      if constexpr (std::is_integral_v<T>) c[i] = integer_binary<T>(sym, a[ia], b[ib]);
      else c[i] = static_cast<T>(binary(sym, double(a[ia]), double(b[ib])));
    }
  });
}

// ---- activation gradients ----------------------------------------------------------------

// dy, x|y: same shape -> dx
//   relu_grad:    dx = x > 0 ? dy : 0
//   leaky_relu_grad: dx = x > 0 ? dy : alpha * dy
//   sigmoid_grad: dx = dy * y * (1 - y)
//   tanh_grad:    dx = dy * (1 - y^2)
void run_act_grad(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const std::string& name = op.name();
  const double alpha = op.has("alpha") ? op.get_float("alpha") : 0.0;
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* dy = static_cast<const T*>(in[0]);
    const T* v = static_cast<const T*>(in[1]);
    T* dx = static_cast<T*>(out[0]);
    for (int64_t i = 0; i < op.input(0).numel; ++i) {
      double g = double(dy[i]), y = double(v[i]);
      double r = name == "relu_grad"         ? (y > 0.0 ? g : 0.0)
                 : name == "leaky_relu_grad" ? (y > 0.0 ? g : alpha * g)
                 : name == "sigmoid_grad"    ? g * y * (1.0 - y)
                                             : g * (1.0 - y * y);
      dx[i] = static_cast<T>(r);
    }
  });
}

// ---- bias_add ----------------------------------------------------------------------------

// The channel dim of x for bias_add / bias_add_grad: last (NHWC) or 1 (NCHW, rank >= 2).
int channel_dim(const OpView& op, const TensorView& x) {
  return op.get_string("data_format") == "NCHW" ? 1 : x.rank() - 1;
}

// x: (...,C) [NCHW: (N,C,...)], b: (C) -> y: shape of x
void run_bias_add(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const TensorView& x = op.input(0);
  int cd = channel_dim(op, x);
  int64_t channels = x.dims[cd];
  int64_t inner = 1;  // elements between consecutive channels
  for (int d = cd + 1; d < x.rank(); ++d) inner *= x.dims[d];
  with_float(x.dtype, [&](auto t) {
    using T = decltype(t);
    const T* xp = static_cast<const T*>(in[0]);
    const T* b = static_cast<const T*>(in[1]);
    T* y = static_cast<T*>(out[0]);
    for (int64_t i = 0; i < x.numel; ++i)
      y[i] = static_cast<T>(double(xp[i]) + double(b[(i / inner) % channels]));
  });
}

}  // namespace

int bias_channel_dim(const OpView& op, const TensorView& x) { return channel_dim(op, x); }

DLRT_REFERENCE_KERNELS(t) {
  for (const Unary& u : kUnary) t.push_back({u.name, run_unary, check_float});
  for (const char* name : {"add", "sub", "mul", "div", "maximum", "minimum"})
    t.push_back({name, run_binary, check_numeric});
  t.push_back({"pow", run_binary, check_float});
  for (const char* name : {"relu_grad", "leaky_relu_grad", "sigmoid_grad", "tanh_grad"})
    t.push_back({name, run_act_grad, check_float});
  t.push_back({"bias_add", run_bias_add, check_float});
}

}  // namespace dlrt::reference::detail
