// tests/conformance/cases_elementwise.cc: unary and binary elementwise ops, activations and
// their gradients, bias_add and bias_add_grad. Shapes: scalars, rank 1 of odd length, rank 3
// and 4; binary ops broadcast both ways (a stretches to b and b to a) and from rank 0.
#include "cases_util.hpp"

namespace dlrt::conformance {
namespace {
using detail::f32;

const Dims kUnaryShapes[] = {{}, {7}, {3, 5, 7}, {2, 3, 4, 5}};

// (a, b) pairs: same shape, b broadcast into a, a broadcast into b, both stretch, scalars.
const std::pair<Dims, Dims> kBinaryShapes[] = {
    {{3, 5, 7}, {3, 5, 7}},
    {{2, 3, 4, 5}, {5}},        // b stretches (bias-like)
    {{4, 1}, {2, 3, 4, 6}},     // a stretches, both ways within one pair of dims
    {{3, 1, 5}, {4, 1}},        // both stretch: (3,4,5)
    {{}, {2, 3}},               // rank-0 a
    {{6, 1}, {1}},              // size-1 b of rank 1
};

}  // namespace

std::vector<Case> elementwise_cases() {
  std::vector<Case> cases;
  const Fill u = uniform(-2, 2);

  for (const Dims& d : kUnaryShapes) {
    cases.push_back({"relu", {f32("x", d, u)}});
    cases.push_back({"sigmoid", {f32("x", d, uniform(-8, 8))}});
    cases.push_back({"tanh", {f32("x", d, uniform(-4, 4))}});
    cases.push_back({"neg", {f32("x", d, u)}});
    cases.push_back({"exp", {f32("x", d, uniform(-6, 6))}});
    cases.push_back({"log", {f32("x", d, uniform(0.01, 20))}});
    cases.push_back({"sqrt", {f32("x", d, uniform(0, 50))}});
    // Gradients: relu_grad's x away from the kink at 0; sigmoid_grad's y in (0,1) and
    // tanh_grad's y in (-1,1), as the forward ops produce them.
    cases.push_back({"relu_grad", {f32("dy", d, u), f32("x", d, away_from_zero(0.01, 2))}});
    cases.push_back({"sigmoid_grad", {f32("dy", d, u), f32("y", d, uniform(0.001, 0.999))}});
    cases.push_back({"tanh_grad", {f32("dy", d, u), f32("y", d, uniform(-0.999, 0.999))}});
  }
  // IEEE edge cases the spec states: log/sqrt of negatives are NaN, log(0) is -inf.
  cases.push_back({"log", {f32("x", {9}, uniform(-3, -0.1))}, {}, {}, true, "negatives give NaN"});
  cases.push_back({"log", {f32("x", {4}, constant(0))}, {}, {}, true, "log(0) = -inf"});
  cases.push_back({"sqrt", {f32("x", {9}, uniform(-3, -0.1))}, {}, {}, true, "negatives give NaN"});
  cases.push_back({"exp", {f32("x", {5}, uniform(-80, 80))}, {}, {}, true, "large magnitudes"});

  for (const auto& [a, b] : kBinaryShapes) {
    for (const char* op : {"add", "sub", "mul"}) cases.push_back({op, {f32("a", a, u), f32("b", b, u)}});
    // Denominators away from 0, so the quotient is well conditioned.
    cases.push_back({"div", {f32("a", a, u), f32("b", b, away_from_zero(0.25, 4))}});
  }

  // bias_add / bias_add_grad: NHWC (C last) at ranks 1, 2 and 4; NCHW (C is dim 1) at ranks
  // 2 and 4; C not a multiple of 8.
  struct BiasShape { const char* format; Dims x; int64_t c; bool defaults; };
  const BiasShape bias[] = {
      {"NHWC", {2, 5, 7, 3}, 3, true},
      {"NHWC", {4, 10}, 10, false},
      {"NHWC", {7}, 7, false},
      {"NCHW", {2, 3, 5, 7}, 3, false},
      {"NCHW", {3, 9}, 9, false},
  };
  for (const BiasShape& s : bias) {
    std::vector<Attr> attrs;
    if (!s.defaults) attrs.push_back(a_str("data_format", s.format));
    cases.push_back({"bias_add", {f32("x", s.x, u), f32("b", {s.c}, u)}, attrs});
    cases.push_back({"bias_add_grad", {f32("dy", s.x, u)}, attrs});
  }
  return cases;
}

}  // namespace dlrt::conformance
