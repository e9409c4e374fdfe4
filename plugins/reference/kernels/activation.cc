// activation.cc: the activations elu, gelu, silu, hard_swish, softplus, clip, the unary maths
// abs, square, rsqrt, and the backward ops <name>_grad(dy, x) -> dx of the activations, in
// double (docs/ops.md's formulas, written out). Every output element reads only its own input
// elements, so the output may alias an input.
#include <algorithm>
#include <cmath>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kInvSqrt2Pi = 0.3989422804014327;   // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluCubic = 0.044715;              // the tanh form's x^3 coefficient

// The attributes the ops of this file read (absent ones keep their defaults, unused).
struct ActAttrs {
  double alpha = 1.0;                    // elu
  bool tanh_gelu = false;                // gelu: approximate == "tanh"
  double lo = -INFINITY, hi = INFINITY;  // clip: min, max
};

ActAttrs read_attrs(const OpView& op) {
  ActAttrs a;
  if (op.has("alpha")) a.alpha = op.get_float("alpha");
  if (op.has("approximate")) a.tanh_gelu = op.get_string("approximate") == "tanh";
  if (op.has("min")) a.lo = op.get_float("min");
  if (op.has("max")) a.hi = op.get_float("max");
  return a;
}

// gelu(x) and gelu'(x) of either form.
double gelu(double x, bool tanh_form) {
  if (tanh_form) return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
  return 0.5 * x * (1.0 + std::erf(x / kSqrt2));
}
double gelu_slope(double x, bool tanh_form) {
  if (tanh_form) {
    const double t = std::tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x));
    return 0.5 * (1.0 + t) +
           0.5 * x * (1.0 - t * t) * kSqrt2OverPi * (1.0 + 3.0 * kGeluCubic * x * x);
  }
  // Phi(x) + x * phi(x)
  return 0.5 * (1.0 + std::erf(x / kSqrt2)) + x * kInvSqrt2Pi * std::exp(-0.5 * x * x);
}

double forward(const std::string& op, double x, const ActAttrs& a) {
  if (op == "elu") return x > 0.0 ? x : a.alpha * std::expm1(x);
  if (op == "gelu") return gelu(x, a.tanh_gelu);
  if (op == "silu") return x * sigmoid(x);
  if (op == "hard_swish") return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
  // log(1 + exp(x)) without overflow: exp(-|x|) <= 1.
  if (op == "softplus") return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
  // NaN stays NaN (std::max/min return their first argument when a comparison is false).
  if (op == "clip") return std::min(std::max(x, a.lo), a.hi);
  if (op == "abs") return std::fabs(x);
  if (op == "square") return x * x;
  return 1.0 / std::sqrt(x);  // "rsqrt": NaN below 0, inf at 0
}

// dx for dy at x.
double backward(const std::string& op, double dy, double x, const ActAttrs& a) {
  if (op == "elu_grad") return x > 0.0 ? dy : dy * a.alpha * std::exp(x);
  if (op == "gelu_grad") return dy * gelu_slope(x, a.tanh_gelu);
  if (op == "silu_grad") {
    const double s = sigmoid(x);
    return dy * s * (1.0 + x * (1.0 - s));
  }
  // PyTorch's pieces: 0 below -3, (2x + 3) / 6 on [-3, 3], 1 above 3.
  if (op == "hard_swish_grad") return x < -3.0 ? 0.0 : x <= 3.0 ? dy * (2.0 * x + 3.0) / 6.0 : dy;
  if (op == "softplus_grad") return dy * sigmoid(x);
  if (op == "clip_grad") return x >= a.lo && x <= a.hi ? dy : 0.0;
  return x > 0.0 ? dy : x < 0.0 ? -dy : 0.0;  // "abs_grad"
}

void check_forward(const OpView& op) { expect_float(op, op.input(0), "x"); }

// x: any shape -> y: same shape
void run_forward(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const ActAttrs a = read_attrs(op);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in[0]);
    T* y = static_cast<T*>(out[0]);
    for (int64_t i = 0; i < op.input(0).numel; ++i)
      y[i] = static_cast<T>(forward(op.name(), double(x[i]), a));
  });
}

void check_backward(const OpView& op) { expect_float(op, op.input(0), "dy"); }

// dy, x: same shape -> dx
void run_backward(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const ActAttrs a = read_attrs(op);
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* dy = static_cast<const T*>(in[0]);
    const T* x = static_cast<const T*>(in[1]);
    T* dx = static_cast<T*>(out[0]);
    for (int64_t i = 0; i < op.input(0).numel; ++i)
      dx[i] = static_cast<T>(backward(op.name(), double(dy[i]), double(x[i]), a));
  });
}

}  // namespace

void add_activation_kernels(KernelTable& t) {
  for (const char* name :
       {"elu", "gelu", "silu", "hard_swish", "softplus", "clip", "abs", "square", "rsqrt"})
    t.push_back({name, run_forward, check_forward});
  for (const char* name : {"elu_grad", "gelu_grad", "silu_grad", "hard_swish_grad", "softplus_grad",
                           "clip_grad", "abs_grad"})
    t.push_back({name, run_backward, check_backward});
}

}  // namespace dlrt::reference::detail
