// tests/conformance/cases_train.cc: the optimizer updates sgd_update and adam_update, with
// realistic magnitudes (params ~1, gradients ~0.1, Adam's v >= 0, step >= 1), both with
// separate outputs and in place (outputs written into the param/slot tensors, as the
// executor runs them).
#include "cases_util.hpp"

namespace dlrt::conformance {
namespace {
using detail::f32;

const Dims kShapes[] = {{10}, {3, 3, 2, 4}, {}};

}  // namespace

std::vector<Case> train_cases() {
  std::vector<Case> cases;
  const Fill param = uniform(-1, 1), grad = uniform(-0.1, 0.1), vel = uniform(-0.01, 0.01);

  struct Sgd { std::vector<Attr> attrs; const char* note; };
  const Sgd sgd[] = {
      {{a_float("learning_rate", 0.01)}, ""},
      {{a_float("learning_rate", 0.1), a_float("momentum", 0.9)}, ""},
      {{a_float("learning_rate", 0.05), a_float("momentum", 0.9), a_bool("nesterov", true)}, ""},
      {{a_int("learning_rate", 1), a_float("momentum", 0.5)}, "int learning_rate widened"},
  };
  int k = 0;
  for (const Sgd& s : sgd)
    for (bool in_place : {false, true}) {
      const Dims& d = kShapes[k++ % 3];
      Case c{"sgd_update", {f32("param", d, param), f32("grad", d, grad), f32("velocity", d, vel)},
             s.attrs, {}, true, s.note};
      if (in_place) c.in_place = {{0, 0}, {1, 2}};
      cases.push_back(std::move(c));
    }

  struct Adam { std::vector<Attr> attrs; double step; };
  const Adam adam[] = {
      {{}, 1},
      {{}, 10},
      {{a_float("learning_rate", 0.01), a_float("beta1", 0.8), a_float("beta2", 0.99),
        a_float("epsilon", 1e-5)}, 3},
      {{a_float("learning_rate", 0.002)}, 1000},
  };
  k = 0;
  for (const Adam& a : adam)
    for (bool in_place : {false, true}) {
      const Dims& d = kShapes[k++ % 3];
      Case c{"adam_update",
             {f32("param", d, param), f32("grad", d, grad), f32("m", d, uniform(-0.01, 0.01)),
              f32("v", d, uniform(0, 1e-4)), f32("step", {}, constant(a.step))},
             a.attrs};
      if (in_place) c.in_place = {{0, 0}, {1, 2}, {2, 3}};
      cases.push_back(std::move(c));
    }
  return cases;
}

}  // namespace dlrt::conformance
