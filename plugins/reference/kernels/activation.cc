// activation.cc: the activations elu, gelu, silu, hard_swish, softplus, mish, clip, the unary maths
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

double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }

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

// One activation: y = forward(x) and, where it has a backward op (`grad` names it), dx =
// backward(dy, x). One row per op is all an op of this family needs here: the kernels below
// look their row up by name, and the registration at the end adds a kernel per name.
struct Activation {
  const char* name;
  double (*forward)(double x, const ActAttrs& a);
  const char* grad = nullptr;  // the backward op's name, or nullptr (square, rsqrt: composed)
  double (*backward)(double dy, double x, const ActAttrs& a) = nullptr;
};

const Activation kActivations[] = {
    {"elu", [](double x, const ActAttrs& a) { return x > 0.0 ? x : a.alpha * std::expm1(x); },
     "elu_grad",
     [](double dy, double x, const ActAttrs& a) {
       return x > 0.0 ? dy : dy * a.alpha * std::exp(x);
     }},
    {"gelu", [](double x, const ActAttrs& a) { return gelu(x, a.tanh_gelu); }, "gelu_grad",
     [](double dy, double x, const ActAttrs& a) { return dy * gelu_slope(x, a.tanh_gelu); }},
    {"silu", [](double x, const ActAttrs&) { return x * sigmoid(x); }, "silu_grad",
     [](double dy, double x, const ActAttrs&) {
       const double s = sigmoid(x);
       return dy * s * (1.0 + x * (1.0 - s));
     }},
    // PyTorch's pieces of the slope: 0 below -3, (2x + 3) / 6 on [-3, 3], 1 above 3.
    {"hard_swish",
     [](double x, const ActAttrs&) { return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0; },
     "hard_swish_grad",
     [](double dy, double x, const ActAttrs&) {
       return x < -3.0 ? 0.0 : x <= 3.0 ? dy * (2.0 * x + 3.0) / 6.0 : dy;
     }},
    // log(1 + exp(x)) without overflow: exp(-|x|) <= 1.
    {"softplus", [](double x, const ActAttrs&) { return softplus(x); }, "softplus_grad",
     [](double dy, double x, const ActAttrs&) { return dy * sigmoid(x); }},
    // x tanh(softplus(x)); slope t + x sigmoid(x) (1 - t^2) with t = tanh(softplus(x)), since
    // softplus' = sigmoid.
    {"mish", [](double x, const ActAttrs&) { return x * std::tanh(softplus(x)); }, "mish_grad",
     [](double dy, double x, const ActAttrs&) {
       const double t = std::tanh(softplus(x));
       return dy * (t + x * sigmoid(x) * (1.0 - t * t));
     }},
    // NaN stays NaN (std::max/min return their first argument when a comparison is false).
    {"clip", [](double x, const ActAttrs& a) { return std::min(std::max(x, a.lo), a.hi); },
     "clip_grad",
     [](double dy, double x, const ActAttrs& a) { return x >= a.lo && x <= a.hi ? dy : 0.0; }},
    {"abs", [](double x, const ActAttrs&) { return std::fabs(x); }, "abs_grad",
     [](double dy, double x, const ActAttrs&) { return x > 0.0   ? dy
                                                       : x < 0.0 ? -dy
                                                                 : 0.0; }},
    {"square", [](double x, const ActAttrs&) { return x * x; }},
    // NaN below 0, inf at 0.
    {"rsqrt", [](double x, const ActAttrs&) { return 1.0 / std::sqrt(x); }},
};

// The row whose forward or backward op is `op` (registered names only).
const Activation& row_of(const std::string& op) {
  for (const Activation& r : kActivations)
    if (op == r.name || (r.grad != nullptr && op == r.grad)) return r;
  return kActivations[0];  // unreachable: only the rows' names are registered
}

void check_forward(const OpView& op) { expect_float(op, op.input(0), "x"); }

// x: any shape -> y: same shape
void run_forward(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const ActAttrs a = read_attrs(op);
  const auto forward = row_of(op.name()).forward;
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(in[0]);
    T* y = static_cast<T*>(out[0]);
    for (int64_t i = 0; i < op.input(0).numel; ++i) y[i] = static_cast<T>(forward(double(x[i]), a));
  });
}

void check_backward(const OpView& op) { expect_float(op, op.input(0), "dy"); }

// dy, x: same shape -> dx
void run_backward(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const ActAttrs a = read_attrs(op);
  const auto backward = row_of(op.name()).backward;
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* dy = static_cast<const T*>(in[0]);
    const T* x = static_cast<const T*>(in[1]);
    T* dx = static_cast<T*>(out[0]);
    for (int64_t i = 0; i < op.input(0).numel; ++i)
      dx[i] = static_cast<T>(backward(double(dy[i]), double(x[i]), a));
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  for (const Activation& r : kActivations) {
    t.push_back({r.name, run_forward, check_forward});
    if (r.grad != nullptr) t.push_back({r.grad, run_backward, check_backward});
  }
}

}  // namespace dlrt::reference::detail
