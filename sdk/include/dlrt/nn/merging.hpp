// dlrt/nn/merging.hpp: layers that take several tensors — Add and Concatenate (Keras'
// merging layers). Called on a list of symbolic tensors in a functional model:
//   nn::SymbolicTensor y = nn::Add()({x, shortcut});
//   nn::SymbolicTensor z = nn::Concatenate(-1)({a, b, c});
// Shapes are checked when the layer is called (and again when the model is built):
// INVALID_ARGUMENT naming the layer and every input shape.
#ifndef DLRT_NN_MERGING_HPP_
#define DLRT_NN_MERGING_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layers.hpp"

namespace dlrt::nn {

// A layer of two or more inputs: the single-input entries refuse.
class MergeLayer : public Layer {
 public:
  Shape output_shape(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>& vars) const override;
  std::vector<ParamSpec> params_multi(const std::vector<Shape>&) const override;

 protected:
  void check_count(const std::vector<Shape>& in) const;
};

// Add(): the elementwise sum of its inputs, which must all have the same shape (Keras' Add
// also broadcasts dims of 1; this one does not: a shape mismatch is refused). Op: add.
class Add : public MergeLayer {
 public:
  std::string type() const override;
  std::string base_name() const override;
  std::shared_ptr<Layer> clone() const override;
  Shape output_shape_multi(const std::vector<Shape>& in) const override;
  Value call_multi(CallContext& c, const std::vector<Value>& xs,
                   const std::vector<Value>&) const override;
};

// Concatenate(axis = -1): joins its inputs along `axis`, which counts the batch dim as 0 as
// Keras does (so for (None, H, W, C) inputs axis 3 and -1 are C; axis 0, the batch, is
// refused). Every input has the same rank and the same dims except along the axis. Op:
// concat (variadic inputs) with attribute axis = the non-negative axis of the batched tensor.
class Concatenate : public MergeLayer {
 public:
  explicit Concatenate(int64_t axis = -1) : axis_(axis) {}
  std::string type() const override;
  std::string base_name() const override;
  std::shared_ptr<Layer> clone() const override;
  int64_t axis() const { return axis_; }

  Shape output_shape_multi(const std::vector<Shape>& in) const override;
  Value call_multi(CallContext& c, const std::vector<Value>& xs,
                   const std::vector<Value>&) const override;

 private:
  int64_t axis_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_MERGING_HPP_
