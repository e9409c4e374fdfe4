// dlrt/nn/input.hpp: Input, keras.Input — the shape of one sample (batch dim left out), where
// a functional model's graph of symbolic tensors starts and what lets a Sequential be built
// before it sees data.
#ifndef DLRT_NN_INPUT_HPP_
#define DLRT_NN_INPUT_HPP_

#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layer.hpp"
#include "dlrt/nn/symbolic.hpp"

namespace dlrt::nn {

// keras.Input(shape=...): the shape of one sample, without the batch dim. In a Sequential it
// is not a layer of the summary; it lets the model be built (and summarised) before it sees
// data. In a functional model it is the symbolic tensor the graph starts from: an Input
// converts to its SymbolicTensor, and every copy of one Input object is the same tensor.
class Input : public Layer {
 public:
  explicit Input(Shape shape);
  operator SymbolicTensor() const { return tensor_; }  // NOLINT: implicit as keras.Input
  const SymbolicTensor& tensor() const { return tensor_; }
  std::string type() const override;
  std::string base_name() const override;
  Shape output_shape(const Shape&) const override;
  Value call(CallContext&, Value x, const std::vector<Value>&) const override;
  bool is_input() const override;
  const Shape& shape() const { return shape_; }

 private:
  Shape shape_;
  SymbolicTensor tensor_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_INPUT_HPP_
