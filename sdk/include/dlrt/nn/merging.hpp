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
  Shape output_shape(const Shape& in) const override { return output_shape_multi({in}); }
  Value call(CallContext& c, Value x, const std::vector<Value>& vars) const override {
    return call_multi(c, {x}, vars);
  }
  std::vector<ParamSpec> params_multi(const std::vector<Shape>&) const override { return {}; }

 protected:
  void check_count(const std::vector<Shape>& in) const {
    if (in.size() < 2)
      throw Error(DLRT_INVALID_ARGUMENT, display_name() + " (" + type() + "): called on " +
                                             std::to_string(in.size()) +
                                             " tensor(s); expected a list of at least 2");
  }
};

// Add(): the elementwise sum of its inputs, which must all have the same shape (Keras' Add
// also broadcasts dims of 1; this one does not: a shape mismatch is refused). Op: add.
class Add : public MergeLayer {
 public:
  std::string type() const override { return "Add"; }
  std::string base_name() const override { return "add"; }
  std::shared_ptr<Layer> clone() const override { return std::make_shared<Add>(*this); }
  Shape output_shape_multi(const std::vector<Shape>& in) const override {
    check_count(in);
    for (const Shape& s : in)
      if (s != in[0])
        throw Error(DLRT_INVALID_ARGUMENT, display_name() + " (Add): input shapes " +
                                               detail::shapes_string(in) +
                                               " differ; expected the same shape for every input");
    return in[0];
  }
  Value call_multi(CallContext& c, const std::vector<Value>& xs,
                   const std::vector<Value>&) const override {
    // x0 + x1 + ... left to right; the last add gets the layer's node name.
    Value sum = xs.at(0);
    for (size_t i = 1; i < xs.size(); ++i)
      sum =
          c.graph.op1("add", {sum, xs[i]}, {},
                      i + 1 == xs.size() ? c.node(name_) : c.node(name_) + "/" + std::to_string(i));
    return sum;
  }
};

// Concatenate(axis = -1): joins its inputs along `axis`, which counts the batch dim as 0 as
// Keras does (so for (None, H, W, C) inputs axis 3 and -1 are C; axis 0, the batch, is
// refused). Every input has the same rank and the same dims except along the axis. Op:
// concat (variadic inputs) with attribute axis = the non-negative axis of the batched tensor.
class Concatenate : public MergeLayer {
 public:
  explicit Concatenate(int64_t axis = -1) : axis_(axis) {}
  std::string type() const override { return "Concatenate"; }
  std::string base_name() const override { return "concatenate"; }
  std::shared_ptr<Layer> clone() const override { return std::make_shared<Concatenate>(*this); }
  int64_t axis() const { return axis_; }

  Shape output_shape_multi(const std::vector<Shape>& in) const override {
    check_count(in);
    const int64_t rank = static_cast<int64_t>(in[0].size()) + 1;  // with the batch dim
    const int64_t a = axis_ < 0 ? axis_ + rank : axis_;
    if (a < 1 || a >= rank)
      throw Error(DLRT_INVALID_ARGUMENT,
                  display_name() + " (Concatenate): axis " + std::to_string(axis_) +
                      " does not fit inputs of shape " + shape_string(in[0]) +
                      "; expected an axis in [1, " + std::to_string(rank - 1) + "] or [-" +
                      std::to_string(rank - 1) + ", -1] (axis 0 is the batch)");
    Shape out = in[0];
    const size_t sa = static_cast<size_t>(a - 1);  // the axis within one sample
    for (size_t i = 1; i < in.size(); ++i) {
      bool fits = in[i].size() == in[0].size();
      for (size_t d = 0; fits && d < in[0].size(); ++d) fits = d == sa || in[i][d] == in[0][d];
      if (!fits)
        throw Error(DLRT_INVALID_ARGUMENT,
                    display_name() + " (Concatenate): input shapes " + detail::shapes_string(in) +
                        " do not fit; expected the same rank and the same dims except along "
                        "axis " +
                        std::to_string(axis_));
      out[sa] += in[i][sa];
    }
    return out;
  }
  Value call_multi(CallContext& c, const std::vector<Value>& xs,
                   const std::vector<Value>&) const override {
    const int64_t rank = static_cast<int64_t>(xs.at(0).dims().size());
    const int64_t a = axis_ < 0 ? axis_ + rank : axis_;
    return c.graph.op1("concat", xs, {{"axis", a}}, c.node(name_));
  }

 private:
  int64_t axis_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_MERGING_HPP_
