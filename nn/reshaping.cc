// reshaping.cc: Flatten and Reshape (dlrt/nn/reshaping.hpp).
#include "dlrt/nn/reshaping.hpp"

#include <utility>

namespace dlrt::nn {

std::shared_ptr<Layer> Flatten::clone() const { return std::make_shared<Flatten>(*this); }

std::string Flatten::type() const { return "Flatten"; }

std::string Flatten::base_name() const { return "flatten"; }

Shape Flatten::output_shape(const Shape& in) const { return {element_count(in)}; }

Value Flatten::call(CallContext& c, Value x, const std::vector<Value>&) const {
  return c.graph.op1("flatten", {x}, {}, c.node(name_));
}

Reshape::Reshape(Shape target_shape) : target_(std::move(target_shape)) {
  int unknown = 0;
  for (int64_t d : target_) {
    if (d == -1) ++unknown;
    else if (d < 1) throw Error(DLRT_INVALID_ARGUMENT, "Reshape: dims must be >= 1 or one -1");
  }
  if (target_.empty() || unknown > 1)
    throw Error(DLRT_INVALID_ARGUMENT, "Reshape: target_shape " + shape_string(target_) +
                                           " needs at least one dim and at most one -1");
}

std::shared_ptr<Layer> Reshape::clone() const { return std::make_shared<Reshape>(*this); }

std::string Reshape::type() const { return "Reshape"; }

std::string Reshape::base_name() const { return "reshape"; }

Shape Reshape::output_shape(const Shape& in) const {
  const int64_t n = element_count(in);
  int64_t known = 1;
  for (int64_t d : target_)
    if (d != -1) known *= d;
  Shape out = target_;
  for (int64_t& d : out)
    if (d == -1) d = known > 0 && n % known == 0 ? n / known : 0;
  if (element_count(out) != n || n == 0)
    throw bad_input(in, "a shape of " + std::to_string(element_count(out)) +
                            " elements, to reshape to " + shape_string(target_));
  return out;
}

Value Reshape::call(CallContext& c, Value x, const std::vector<Value>&) const {
  const std::vector<int64_t> xd = x.dims();
  const Shape out = output_shape(Shape(xd.begin() + 1, xd.end()));
  std::vector<int64_t> dims = {xd.at(0)};
  dims.insert(dims.end(), out.begin(), out.end());
  return c.graph.op1("reshape", {x}, {{"shape", dims}}, c.node(name_));
}

}  // namespace dlrt::nn
