// layers.cc: the Layer interface and the core layers (dlrt/nn/layers.hpp).
#include "dlrt/nn/layers.hpp"

#include <algorithm>

namespace dlrt::nn {

std::string check_activation(const std::string& a, const std::string& who) {
  if (a.empty() || a == "linear") return "none";
  if (a == "relu" || a == "sigmoid" || a == "tanh" || a == "softmax") return a;
  throw Error(DLRT_INVALID_ARGUMENT, who + ": unknown activation '" + a +
                                         "'; expected linear, relu, sigmoid, tanh or softmax");
}

Value apply_activation(Graph& g, Value x, const std::string& act) {
  if (act == "none") return x;
  // Softmax in f32 whatever came in (a mixed-precision policy's 16-bit logits): its
  // exponentials and sum are where 16 bits lose the most (mixed_precision.hpp).
  if (act == "softmax" && x.dtype() != DLRT_F32)
    return g.op1("softmax", {g.op1("cast", {x}, {{"dtype", DLRT_F32}})});
  if (act == "softmax") return g.op1("softmax", {x});
  return g.op1(act, {x});
}

std::vector<ParamSpec> Layer::params(const Shape& /*in*/) const { return {}; }

bool Layer::is_input() const { return false; }

int64_t Layer::input_ids() const { return 0; }

Shape Layer::output_shape_multi(const std::vector<Shape>& in) const {
  check_single(in.size());
  return output_shape(in[0]);
}

std::vector<ParamSpec> Layer::params_multi(const std::vector<Shape>& in) const {
  check_single(in.size());
  return params(in[0]);
}

Value Layer::call_multi(CallContext& c, const std::vector<Value>& xs,
                        const std::vector<Value>& vars) const {
  check_single(xs.size());
  return call(c, xs[0], vars);
}

std::shared_ptr<Layer> Layer::clone() const { return nullptr; }

void Layer::set_dtype_policy(const std::string& policy) {
  policy_compute_dtype(policy);  // checks the name
  dtype_policy_ = policy;
}

bool Layer::float32_only() const { return false; }

Error Layer::bad_input(const Shape& in, const std::string& expected) const {
  return Error(DLRT_INVALID_ARGUMENT, display_name() + " (" + type() + "): input shape " +
                                          shape_string(in) + " does not fit; expected " + expected);
}

void Layer::check_single(size_t inputs) const {
  if (inputs != 1)
    throw Error(DLRT_INVALID_ARGUMENT, display_name() + " (" + type() + "): called on " +
                                           std::to_string(inputs) +
                                           " tensors; it takes exactly one");
}

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

SymbolicTensor Layer::operator()(const SymbolicTensor& x) const {
  return (*this)(std::vector<SymbolicTensor>{x});
}

SymbolicTensor Layer::operator()(const std::vector<SymbolicTensor>& xs) const {
  if (is_input())
    throw Error(DLRT_INVALID_ARGUMENT, "Input: is not called; use it as a tensor: Conv2D(...)(in)");
  if (xs.empty())
    throw Error(DLRT_INVALID_ARGUMENT,
                display_name() + " (" + type() + "): called on no tensors; expected at least one");
  if (!called_) {
    called_ = clone();
    if (!called_)
      throw Error(DLRT_INVALID_ARGUMENT, display_name() + " (" + type() +
                                             "): cannot be called on symbolic tensors: it "
                                             "does not override Layer::clone()");
    called_->called_.reset();  // the copy must not own itself
  }
  std::vector<Shape> shapes;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!xs[i].valid())
      throw Error(DLRT_INVALID_ARGUMENT, display_name() + " (" + type() + "): input " +
                                             std::to_string(i) + " refers to no tensor");
    shapes.push_back(xs[i].shape());
  }
  auto node = std::make_shared<Node>();
  node->layer = called_;
  node->inputs = xs;
  node->outputs = {called_->output_shape_multi(shapes)};  // throws for shapes that do not fit
  return SymbolicTensor(std::move(node), 0);
}

std::string detail::shapes_string(const std::vector<Shape>& in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i)
    out += (i == 0 ? "" : i + 1 == in.size() ? " and " : ", ") + shape_string(in[i]);
  return out;
}

bool detail::check_padding(const std::string& p, const std::string& who) {
  if (p == "valid" || p == "VALID") return false;
  if (p == "same" || p == "SAME") return true;
  throw Error(DLRT_INVALID_ARGUMENT, who + ": padding '" + p + "'; expected valid or same");
}

void detail::check_size2(const Size2& s, const std::string& what, const std::string& who) {
  if (s[0] < 1 || s[1] < 1) throw Error(DLRT_INVALID_ARGUMENT, who + ": " + what + " must be >= 1");
}

void detail::check_strides_dilation(const Size2& strides, const Size2& dilation,
                                    const std::string& who) {
  if (std::max(strides[0], strides[1]) > 1 && std::max(dilation[0], dilation[1]) > 1)
    throw Error(DLRT_INVALID_ARGUMENT,
                who + ": strides > 1 are not supported together with dilation_rate > 1 (as Keras)");
}

Conv2D::Conv2D(int64_t filters, Size2 kernel, const Conv2DOptions& o)
    : filters_(filters),
      kernel_(kernel),
      strides_(o.strides),
      same_(detail::check_padding(o.padding, "Conv2D")),
      activation_(check_activation(o.activation, "Conv2D")),
      kernel_init_(o.kernel_initializer),
      bias_init_(o.bias_initializer),
      kernel_reg_(o.kernel_regularizer),
      dilation_(o.dilation_rate),
      groups_(o.groups),
      use_bias_(o.use_bias) {
  if (filters < 1) throw Error(DLRT_INVALID_ARGUMENT, "Conv2D: filters must be >= 1");
  detail::check_size2(kernel, "kernel", "Conv2D");
  detail::check_size2(o.strides, "strides", "Conv2D");
  detail::check_size2(o.dilation_rate, "dilation_rate", "Conv2D");
  detail::check_strides_dilation(o.strides, o.dilation_rate, "Conv2D");
  if (o.groups < 1) throw Error(DLRT_INVALID_ARGUMENT, "Conv2D: groups must be >= 1");
  if (filters % o.groups != 0)
    throw Error(DLRT_INVALID_ARGUMENT, "Conv2D: filters (" + std::to_string(filters) +
                                           ") must be a multiple of groups (" +
                                           std::to_string(o.groups) + ")");
}

std::shared_ptr<Layer> Conv2D::clone() const { return std::make_shared<Conv2D>(*this); }

std::string Conv2D::type() const { return "Conv2D"; }

std::string Conv2D::base_name() const { return "conv2d"; }

Shape Conv2D::output_shape(const Shape& in) const {
  if (in.size() != 3) throw bad_input(in, "(None, H, W, C)");
  if (in[2] % groups_ != 0)
    throw bad_input(in, "C a multiple of groups (" + std::to_string(groups_) + ")");
  const int64_t h = detail::window_out(in[0], kernel_[0], strides_[0], same_, dilation_[0]);
  const int64_t w = detail::window_out(in[1], kernel_[1], strides_[1], same_, dilation_[1]);
  if (h < 1 || w < 1) throw bad_input(in, "H and W >= the (dilated) kernel with valid padding");
  return {h, w, filters_};
}

std::vector<ParamSpec> Conv2D::params(const Shape& in) const {
  std::vector<ParamSpec> p = {{"kernel",
                               {kernel_[0], kernel_[1], in.at(2) / groups_, filters_},
                               kernel_init_,
                               true,
                               kernel_reg_}};
  if (use_bias_) p.push_back({"bias", {filters_}, bias_init_, true});
  return p;
}

Value Conv2D::call(CallContext& c, Value x, const std::vector<Value>& v) const {
  const OpAttrs conv = conv_attrs();
  if (!use_bias_ && activation_ == "none")
    return c.graph.op1("conv2d", {x, v[0]}, conv, c.node(name_));
  if (activation_ == "softmax") {
    Value y = c.graph.op1("conv2d", {x, v[0]}, conv);
    if (use_bias_) y = c.graph.op1("bias_add", {y, v[1]});
    return apply_activation(c.graph, y, activation_);
  }
  OpAttrs fused = conv;
  fused.emplace_back("activation", activation_);
  return c.graph.op1("conv2d_bias_act", {x, v[0], use_bias_ ? v[1] : zero_bias(c)}, fused,
                     c.node(name_));
}

OpAttrs Conv2D::conv_attrs() const {
  OpAttrs conv = {{"strides", {strides_[0], strides_[1]}}, {"padding", same_ ? "SAME" : "VALID"}};
  // Only when not the default, so a plain Conv2D builds the op it always built.
  if (dilation_ != Size2{1, 1})
    conv.emplace_back("dilations", std::vector<int64_t>{dilation_[0], dilation_[1]});
  if (groups_ != 1) conv.emplace_back("groups", groups_);
  return conv;
}

Value Conv2D::zero_bias(CallContext& c) const {
  return c.graph.constant<float>("", {filters_}, std::vector<float>(size_t(filters_), 0.f));
}

Conv2DOptions Conv2D::options(Size2 strides, std::string padding, std::string activation) {
  Conv2DOptions o;
  o.strides = strides;
  o.padding = std::move(padding);
  o.activation = std::move(activation);
  return o;
}

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

Shape Pool2D::output_shape(const Shape& in) const {
  if (in.size() != 3) throw bad_input(in, "(None, H, W, C)");
  const int64_t h = detail::window_out(in[0], pool_[0], strides_[0], same_);
  const int64_t w = detail::window_out(in[1], pool_[1], strides_[1], same_);
  if (h < 1 || w < 1) throw bad_input(in, "H and W >= the pool size with valid padding");
  return {h, w, in[2]};
}

Value Pool2D::call(CallContext& c, Value x, const std::vector<Value>&) const {
  return c.graph.op1(op_, {x},
                     {{"ksize", {pool_[0], pool_[1]}},
                      {"strides", {strides_[0], strides_[1]}},
                      {"padding", same_ ? "SAME" : "VALID"}},
                     c.node(name_));
}

Pool2D::Pool2D(std::string op, Size2 pool, Size2 strides, const std::string& padding)
    : op_(std::move(op)),
      pool_(pool),
      strides_(strides[0] == 0 ? pool : strides),
      same_(detail::check_padding(padding, op_)) {
  detail::check_size2(pool_, "pool size", op_);
  detail::check_size2(strides_, "strides", op_);
}

std::shared_ptr<Layer> MaxPool2D::clone() const { return std::make_shared<MaxPool2D>(*this); }

std::string MaxPool2D::type() const { return "MaxPooling2D"; }

std::string MaxPool2D::base_name() const { return "max_pooling2d"; }

std::shared_ptr<Layer> AvgPool2D::clone() const { return std::make_shared<AvgPool2D>(*this); }

std::string AvgPool2D::type() const { return "AveragePooling2D"; }

std::string AvgPool2D::base_name() const { return "average_pooling2d"; }

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

Dropout::Dropout(double rate) : rate_(rate) {
  if (!(rate >= 0.0 && rate < 1.0))
    throw Error(DLRT_INVALID_ARGUMENT, "Dropout: rate must be in [0, 1)");
}

std::shared_ptr<Layer> Dropout::clone() const { return std::make_shared<Dropout>(*this); }

std::string Dropout::type() const { return "Dropout"; }

std::string Dropout::base_name() const { return "dropout"; }

Shape Dropout::output_shape(const Shape& in) const { return in; }

Value Dropout::call(CallContext& c, Value x, const std::vector<Value>&) const {
  if (!c.training || rate_ == 0.0) return x;
  return c.graph.op1("dropout", {x},
                     {{"rate", rate_}, {"seed", static_cast<int64_t>(derive_seed(c.seed, name_))}},
                     c.node(name_));
}

Shape ActivationLayer::output_shape(const Shape& in) const { return in; }

Value ActivationLayer::call(CallContext& c, Value x, const std::vector<Value>&) const {
  return apply_activation(c.graph, x, activation_);
}

std::string ActivationLayer::type() const { return type_; }

std::string ActivationLayer::base_name() const { return base_; }

std::shared_ptr<Layer> ReLU::clone() const { return std::make_shared<ReLU>(*this); }

std::shared_ptr<Layer> Softmax::clone() const { return std::make_shared<Softmax>(*this); }

std::shared_ptr<Layer> Sigmoid::clone() const { return std::make_shared<Sigmoid>(*this); }

std::shared_ptr<Layer> Tanh::clone() const { return std::make_shared<Tanh>(*this); }

}  // namespace dlrt::nn
