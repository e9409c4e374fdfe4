// input.cc: Input, the shape of one sample and the symbolic tensor it stands for
// (dlrt/nn/input.hpp).
#include "dlrt/nn/input.hpp"

#include <memory>
#include <utility>

namespace dlrt::nn {

Input::Input(Shape shape) : shape_(std::move(shape)) {
  for (int64_t d : shape_)
    if (d < 1) throw Error(DLRT_INVALID_ARGUMENT, "Input: every dim must be >= 1");
  if (shape_.empty()) throw Error(DLRT_INVALID_ARGUMENT, "Input: shape must not be empty");
  auto node = std::make_shared<Node>();  // layer null: an input node
  node->outputs = {shape_};
  tensor_ = SymbolicTensor(std::move(node), 0);
}

std::string Input::type() const { return "InputLayer"; }

std::string Input::base_name() const { return "input"; }

Shape Input::output_shape(const Shape&) const { return shape_; }

Value Input::call(CallContext&, Value x, const std::vector<Value>&) const { return x; }

bool Input::is_input() const { return true; }

}  // namespace dlrt::nn
