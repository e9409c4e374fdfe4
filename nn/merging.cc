// merging.cc: the merging layers (dlrt/nn/merging.hpp).
#include "dlrt/nn/merging.hpp"

namespace dlrt::nn {

Shape MergeLayer::output_shape(const Shape& in) const { return output_shape_multi({in}); }

Value MergeLayer::call(CallContext& c, Value x, const std::vector<Value>& vars) const {
  return call_multi(c, {x}, vars);
}

std::vector<ParamSpec> MergeLayer::params_multi(const std::vector<Shape>&) const { return {}; }

void MergeLayer::check_count(const std::vector<Shape>& in) const {
  if (in.size() < 2)
    throw Error(DLRT_INVALID_ARGUMENT, display_name() + " (" + type() + "): called on " +
                                           std::to_string(in.size()) +
                                           " tensor(s); expected a list of at least 2");
}

std::string Add::type() const { return "Add"; }

std::string Add::base_name() const { return "add"; }

std::shared_ptr<Layer> Add::clone() const { return std::make_shared<Add>(*this); }

Shape Add::output_shape_multi(const std::vector<Shape>& in) const {
  check_count(in);
  for (const Shape& s : in)
    if (s != in[0])
      throw Error(DLRT_INVALID_ARGUMENT, display_name() + " (Add): input shapes " +
                                             detail::shapes_string(in) +
                                             " differ; expected the same shape for every input");
  return in[0];
}

Value Add::call_multi(CallContext& c, const std::vector<Value>& xs,
                      const std::vector<Value>&) const {
  // x0 + x1 + ... left to right; the last add gets the layer's node name.
  Value sum = xs.at(0);
  for (size_t i = 1; i < xs.size(); ++i)
    sum = c.graph.op1("add", {sum, xs[i]}, {},
                      i + 1 == xs.size() ? c.node(name_) : c.node(name_) + "/" + std::to_string(i));
  return sum;
}

std::string Concatenate::type() const { return "Concatenate"; }

std::string Concatenate::base_name() const { return "concatenate"; }

std::shared_ptr<Layer> Concatenate::clone() const { return std::make_shared<Concatenate>(*this); }

Shape Concatenate::output_shape_multi(const std::vector<Shape>& in) const {
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

Value Concatenate::call_multi(CallContext& c, const std::vector<Value>& xs,
                              const std::vector<Value>&) const {
  const int64_t rank = static_cast<int64_t>(xs.at(0).dims().size());
  const int64_t a = axis_ < 0 ? axis_ + rank : axis_;
  return c.graph.op1("concat", xs, {{"axis", a}}, c.node(name_));
}

}  // namespace dlrt::nn
