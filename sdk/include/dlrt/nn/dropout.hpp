// dlrt/nn/dropout.hpp: Dropout, Keras' regularisation by random masks: active in the training
// step only, with masks that a resumed or replicated run draws reproducibly.
#ifndef DLRT_NN_DROPOUT_HPP_
#define DLRT_NN_DROPOUT_HPP_

#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layer.hpp"

namespace dlrt::nn {

// Dropout(rate): in the training step y = x * mask, mask = (u >= rate) / (1 - rate); identity
// in evaluation and prediction. The mask stream is keyed by derive_seed(model seed, name) and
// the step executable's run count (the op's rng_offset), which fit() sets to the model's step
// count, so a resumed run draws the masks of the uninterrupted one. Under a strategy, replica
// g > 0 keys its stream by derive_seed(seed, "replica/g") instead of the model seed.
class Dropout : public Layer {
 public:
  explicit Dropout(double rate);
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
  Shape output_shape(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override;

 private:
  double rate_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_DROPOUT_HPP_
