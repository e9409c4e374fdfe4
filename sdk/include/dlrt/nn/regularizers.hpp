// dlrt/nn/regularizers.hpp: weight penalties added to the training loss (Keras' regularizers).
//
//   nn::Dense(64, {"relu", nn::Initializer::glorot_uniform(), nn::Regularizer::l2(1e-4)})
//
// L2(l2), as keras.regularizers.L2: the penalty l2 * sum(w^2) of the weight it is set on is
// added to the loss the optimizer minimises and the loss fit() and evaluate() report (Keras
// adds model.losses to both). The default regularizer is none (no penalty, no ops).
#ifndef DLRT_NN_REGULARIZERS_HPP_
#define DLRT_NN_REGULARIZERS_HPP_

#include "dlrt/dlrt.hpp"

namespace dlrt::nn {

class Regularizer {
 public:
  Regularizer() = default;  // none
  static Regularizer none() { return Regularizer(); }
  // INVALID_ARGUMENT unless l2 is finite and >= 0 (0 is none).
  static Regularizer l2(double l2);

  bool active() const { return l2_ > 0.0; }
  double l2_factor() const { return l2_; }

  // The scalar penalty of weight `w` (any shape): l2 * reduce_sum(w * w). Only when active().
  Value penalty(Graph& g, const Value& w) const;

 private:
  double l2_ = 0.0;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_REGULARIZERS_HPP_
