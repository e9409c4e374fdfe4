// dlrt/nn/reshaping.hpp: Flatten and Reshape, Keras' reshaping layers: each sample's elements
// in row-major order, unchanged, under another shape (the batch dim is kept).
#ifndef DLRT_NN_RESHAPING_HPP_
#define DLRT_NN_RESHAPING_HPP_

#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layer.hpp"

namespace dlrt::nn {

class Flatten : public Layer {
 public:
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
  Shape output_shape(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override;
};

// Keras' Reshape(target_shape): (None, in...) -> (None, target_shape...), the elements in
// row-major order unchanged; one dim of target_shape may be -1 (inferred). INVALID_ARGUMENT
// when the element counts differ.
class Reshape : public Layer {
 public:
  explicit Reshape(Shape target_shape);
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
  Shape output_shape(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override;

 private:
  Shape target_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_RESHAPING_HPP_
