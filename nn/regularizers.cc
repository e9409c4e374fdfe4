// regularizers.cc: Regularizer (dlrt/nn/regularizers.hpp).
#include "dlrt/nn/regularizers.hpp"

#include <cmath>
#include <string>

namespace dlrt::nn {

Regularizer Regularizer::l2(double l2) {
  if (!(std::isfinite(l2) && l2 >= 0.0))
    throw Error(DLRT_INVALID_ARGUMENT,
                "Regularizer::l2: l2 = " + std::to_string(l2) + "; expected a finite value >= 0");
  Regularizer r;
  r.l2_ = l2;
  return r;
}

Value Regularizer::penalty(Graph& g, const Value& w) const {
  Value sum = g.op1("reduce_sum", {g.op1("mul", {w, w})});
  return g.op1("mul", {sum, g.constant<float>("", {}, {static_cast<float>(l2_)})});
}

}  // namespace dlrt::nn
