// dense.cc: Dense (dlrt/nn/dense.hpp).
#include "dlrt/nn/dense.hpp"

#include "dlrt/nn/activations.hpp"

namespace dlrt::nn {

Dense::Dense(int64_t units, const DenseOptions& o)
    : units_(units),
      activation_(check_activation(o.activation, "Dense")),
      kernel_init_(o.kernel_initializer),
      bias_init_(o.bias_initializer),
      kernel_reg_(o.kernel_regularizer) {
  if (units < 1) throw Error(DLRT_INVALID_ARGUMENT, "Dense: units must be >= 1");
}

std::shared_ptr<Layer> Dense::clone() const { return std::make_shared<Dense>(*this); }

std::string Dense::type() const { return "Dense"; }

std::string Dense::base_name() const { return "dense"; }

Shape Dense::output_shape(const Shape& in) const {
  if (in.empty()) throw bad_input(in, "(None, ..., features)");
  Shape out = in;
  out.back() = units_;
  return out;
}

std::vector<ParamSpec> Dense::params(const Shape& in) const {
  return {{"kernel", {in.back(), units_}, kernel_init_, true, kernel_reg_},
          {"bias", {units_}, bias_init_, true}};
}

Value Dense::call(CallContext& c, Value x, const std::vector<Value>& v) const {
  const std::string fused = activation_ == "softmax" ? "none" : activation_;
  std::vector<int64_t> dims = x.dims();
  const bool sequence = dims.size() > 2;  // fold (B, T...) into the matmul's rows
  Value rows = sequence
                   ? c.graph.op1("reshape", {x}, {{"shape", std::vector<int64_t>{-1, dims.back()}}})
                   : x;
  Value y = c.graph.op1("matmul_bias_act", {rows, v[0], v[1]}, {{"activation", fused}},
                        sequence ? "" : c.node(name_));
  if (sequence) {
    dims.back() = units_;
    y = c.graph.op1("reshape", {y}, {{"shape", dims}}, c.node(name_));
  }
  return activation_ == "softmax" ? apply_activation(c.graph, y, activation_) : y;
}

DenseOptions Dense::options(std::string activation) {
  DenseOptions o;
  o.activation = std::move(activation);
  return o;
}

}  // namespace dlrt::nn
