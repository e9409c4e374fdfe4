// core/ops/samples_layer_norm.cc: samples of layer_norm and layer_norm_grad
// (infer_layer_norm.cc): rank 1, 2 and 3 ((B,T,D), a sequence model's activations), D = 1
// (each row's variance is 0: y = beta, and the op must stay finite), D not a multiple of 8,
// and a large D (a wide row, where a kernel's reduction spans many threads), with both
// epsilons (PyTorch's 1e-5 default, Keras' 1e-3).
#include "samples.hpp"

namespace dlrt::ops::samples {
namespace {

struct LnShape {
  Dims x;
  const char* note;
};
const LnShape kLnShapes[] = {
    {{7}, "rank 1: one row"},
    {{4, 10}, "rank 2"},
    {{2, 5, 13}, "rank 3 (B,T,D)"},
    {{3, 4, 1}, "D = 1: zero variance, y = beta"},
    {{3, 2100}, "large D"},
    {{1, 1, 64}, ""},
};

}  // namespace

SampleFn layer_norm(bool grad) {
  return [grad](const OpDef&) {
    std::vector<Sample> out;
    for (const LnShape& s : kLnShapes) {
      const Dims d{s.x.back()};
      const Dims rows(s.x.begin(), s.x.end() - 1);
      for (double eps : {1e-5, 1e-3}) {
        Sample k;
        k.note = s.note;
        if (eps != 1e-5) k.attrs.emplace("epsilon", eps);
        if (!grad) {
          k.inputs = {f32_in("x", s.x, uniform(-2, 2)), f32_in("gamma", d, uniform(0.5, 1.5)),
                      f32_in("beta", d, uniform(-1, 1))};
        } else {
          // rstd in [0.5, 2): variances of 0.25 to 4, as layer_norm saves them.
          k.inputs = {f32_in("dy", s.x, uniform(-1, 1)), f32_in("x", s.x, uniform(-2, 2)),
                      f32_in("gamma", d, uniform(0.5, 1.5)),
                      f32_in("mean", rows, uniform(-0.5, 0.5)),
                      f32_in("rstd", rows, uniform(0.5, 2))};
        }
        out.push_back(std::move(k));
      }
    }
    return out;
  };
}

}  // namespace dlrt::ops::samples
