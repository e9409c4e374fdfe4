// dlrt/nn/layers.hpp: Keras' layers as graph builders — the Layer interface, Input (the
// shape of one sample), Conv2D, MaxPool2D, AvgPool2D, Flatten, Dense, Dropout, and the
// activations ReLU, Sigmoid, Tanh, Softmax. More layers: merging.hpp (Add, Concatenate),
// activations.hpp (Activation by name, LeakyReLU), batch_norm.hpp (BatchNormalization),
// global_pooling.hpp (GlobalAveragePooling2D), depthwise_conv.hpp (DepthwiseConv2D).
//
// A layer is a description, not a place where values live: it says which parameters it needs
// for an input shape (`params`: kernel (KH,KW,Ci,Co) HWIO and bias (Co) for Conv2D; kernel
// (in,out) and bias (out) for Dense), what shape it outputs, and how to build its ops on a
// batch `x` (B, in...) given those parameters as graph variables (`call`). The model creates
// the variables (named "<layer>/<param>", e.g. "conv2d/kernel") and may build a layer's ops
// several times in one graph — the training step, evaluation and prediction each get their
// own ops over the same variables.
//
// Two ways to use a layer (model.hpp): list it in a Sequential, or call it on symbolic
// tensors (symbolic.hpp) and give the inputs and outputs to an nn::Model:
//   auto in = nn::Input({28, 28, 1});
//   nn::SymbolicTensor x = nn::Conv2D(16, {3, 3})(in);
//   nn::SymbolicTensor y = nn::Add()({x, nn::Conv2D(16, {1, 1})(x)});  // several inputs
// Calling a layer object stores a copy of it (clone()) in the node; calling the same object
// again uses that same copy, so the two calls share the layer's weights (Keras' shared
// layers). Copies of a layer object made after its first call share them too.
//
// Single-input layers implement output_shape / params / call on one shape and one value.
// Multi-input layers (Add, Concatenate) override the *_multi versions, whose defaults take
// exactly one input and forward to the single-input ones; the model only calls the _multi
// ones. A layer that is to be called on symbolic tensors overrides clone() (one line:
// `return std::make_shared<MyLayer>(*this);`); without it, it still works in a Sequential.
// Every built-in layer (here, merging.hpp, activations.hpp, batch_norm.hpp,
// global_pooling.hpp) overrides it; tests/nn/nn_functional_layers_test.cc calls each one on
// symbolic tensors, so a new built-in layer belongs in that test's list.
//
// Ops: Conv2D and Dense with activation none/relu/sigmoid/tanh are one fused op each
// (conv2d_bias_act, matmul_bias_act), softmax is a separate op; images are NHWC.
#ifndef DLRT_NN_LAYERS_HPP_
#define DLRT_NN_LAYERS_HPP_

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/data.hpp"
#include "dlrt/nn/initializers.hpp"
#include "dlrt/nn/mixed_precision.hpp"
#include "dlrt/nn/regularizers.hpp"
#include "dlrt/nn/symbolic.hpp"

namespace dlrt::nn {

using Size2 = std::array<int64_t, 2>;  // (h, w)

// One parameter of a layer. `name` is the part after the layer's name ("kernel", "bias").
// `regularizer` (none by default) adds its penalty of this parameter to the training loss.
struct ParamSpec {
  ParamSpec(std::string name_, Shape dims_, Initializer init_, bool trainable_,
            Regularizer regularizer_ = {})
      : name(std::move(name_)),
        dims(std::move(dims_)),
        init(init_),
        trainable(trainable_),
        regularizer(regularizer_) {}
  std::string name;
  Shape dims;
  Initializer init;
  bool trainable;
  Regularizer regularizer;
};

// A non-trainable variable's new value, computed by the training step (BatchNormalization's
// moving statistics): the step assigns `value` to `variable` after it runs.
struct StateUpdate {
  Value variable;
  Value value;
};

// What `call` builds with: the graph, whether this is the training step (Dropout is active
// only there), the model seed (Dropout's mask stream is derive_seed(seed, layer name)) and
// the prefix of this build's node names ("train/", "eval_64/"), since one layer's ops are
// built once per executable and node names are unique in a graph. `state_updates`, when the
// step applies them (the single-device training step), collects the new values of the
// layers' non-trainable state; nullptr elsewhere (evaluation, prediction, and the replicated
// step, which does not update such state).
struct CallContext {
  Graph& graph;
  bool training;
  uint64_t seed;
  std::string scope;
  std::vector<StateUpdate>* state_updates = nullptr;
  // Inference builds may fold a BatchNormalization into the Conv2D before it (Plan::fold_bn);
  // save_onnx turns it off so the exported model keeps its BatchNormalization nodes.
  bool fold_batch_norm = true;
  std::string node(const std::string& layer_name) const { return scope + layer_name; }
};

// "linear" (or "") = none, "relu", "sigmoid", "tanh", "softmax"; anything else is refused
// when the layer is made.
inline std::string check_activation(const std::string& a, const std::string& who) {
  if (a.empty() || a == "linear") return "none";
  if (a == "relu" || a == "sigmoid" || a == "tanh" || a == "softmax") return a;
  throw Error(DLRT_INVALID_ARGUMENT, who + ": unknown activation '" + a +
                                         "'; expected linear, relu, sigmoid, tanh or softmax");
}

inline Value apply_activation(Graph& g, Value x, const std::string& act) {
  if (act == "none") return x;
  // Softmax in f32 whatever came in (a mixed-precision policy's 16-bit logits): its
  // exponentials and sum are where 16 bits lose the most (mixed_precision.hpp).
  if (act == "softmax" && x.dtype() != DLRT_F32)
    return g.op1("softmax", {g.op1("cast", {x}, {{"dtype", DLRT_F32}})});
  if (act == "softmax") return g.op1("softmax", {x});
  return g.op1(act, {x});
}

class Layer {
 public:
  virtual ~Layer() = default;
  virtual std::string type() const = 0;       // the class, as Keras' summary shows it
  virtual std::string base_name() const = 0;  // the default name before uniquing: "conv2d"
  // The output shape for input shape `in` (batch dim left out); INVALID_ARGUMENT naming the
  // layer when `in` does not fit.
  virtual Shape output_shape(const Shape& in) const = 0;
  virtual std::vector<ParamSpec> params(const Shape& /*in*/) const { return {}; }
  // Builds the ops of this layer on x (B, in...); `vars` are the params() in order.
  virtual Value call(CallContext& c, Value x, const std::vector<Value>& vars) const = 0;
  virtual bool is_input() const { return false; }
  // How many integer ids the layer takes as input (Embedding's input_dim), 0 when it takes
  // float features. When every layer reading a model's input takes ids, the model feeds
  // i32/i64 x unchanged (not cast to f32) and checks each id on the host (session.hpp).
  virtual int64_t input_ids() const { return 0; }

  // The same for a layer called on several tensors (Add, Concatenate override these). The
  // defaults take exactly one input and forward to the single-input versions above.
  virtual Shape output_shape_multi(const std::vector<Shape>& in) const {
    check_single(in.size());
    return output_shape(in[0]);
  }
  virtual std::vector<ParamSpec> params_multi(const std::vector<Shape>& in) const {
    check_single(in.size());
    return params(in[0]);
  }
  virtual Value call_multi(CallContext& c, const std::vector<Value>& xs,
                           const std::vector<Value>& vars) const {
    check_single(xs.size());
    return call(c, xs[0], vars);
  }

  // A copy of this layer as the most derived type, for calls on symbolic tensors (the node
  // keeps it). Null (the default) means the layer can only be used in a Sequential.
  virtual std::shared_ptr<Layer> clone() const { return nullptr; }

  // Calls the layer on symbolic tensors: checks the shapes now (INVALID_ARGUMENT naming the
  // layer and the shapes) and returns the output, whose node records this call.
  SymbolicTensor operator()(const SymbolicTensor& x) const;
  SymbolicTensor operator()(const std::vector<SymbolicTensor>& xs) const;

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  // Keras' layer.trainable: false freezes the layer's weights (they get no updates and count
  // as non-trainable in summary()). fit takes it at compile(); Model::trainable_variables now.
  bool trainable() const { return trainable_; }
  void set_trainable(bool trainable) { trainable_ = trainable; }
  // The name in messages: the model's name for it, or its base name before a model named it.
  std::string display_name() const { return name_.empty() ? base_name() : name_; }
  // Keras' layer.dtype_policy: "float32", "mixed_bfloat16" or "mixed_float16"
  // (mixed_precision.hpp). A layer takes the global policy when it is made.
  const std::string& dtype_policy() const { return dtype_policy_; }
  void set_dtype_policy(const std::string& policy) {
    policy_compute_dtype(policy);  // checks the name
    dtype_policy_ = policy;
  }
  // Layers whose arithmetic stays f32 under a mixed policy (the normalisations: their
  // statistics need f32's precision); their float inputs are cast to f32 instead.
  virtual bool float32_only() const { return false; }

 protected:
  std::string name_;  // set by the model: "conv2d", "conv2d_1", ...
  bool trainable_ = true;
  std::string dtype_policy_ = global_policy();
  Error bad_input(const Shape& in, const std::string& expected) const {
    return Error(DLRT_INVALID_ARGUMENT, display_name() + " (" + type() + "): input shape " +
                                            shape_string(in) + " does not fit; expected " +
                                            expected);
  }
  void check_single(size_t inputs) const {
    if (inputs != 1)
      throw Error(DLRT_INVALID_ARGUMENT, display_name() + " (" + type() + "): called on " +
                                             std::to_string(inputs) +
                                             " tensors; it takes exactly one");
  }

 private:
  // The copy that calls of this object record in their nodes (made on the first call).
  mutable std::shared_ptr<Layer> called_;
};

// Holds any layer by value in an initializer list: Sequential(ctx, {Conv2D(...), ...}).
class LayerRef {
 public:
  template <typename L, typename = std::enable_if_t<std::is_base_of_v<Layer, std::decay_t<L>>>>
  LayerRef(L&& layer)  // NOLINT: implicit on purpose
      : layer_(std::make_shared<std::decay_t<L>>(std::forward<L>(layer))) {}
  std::shared_ptr<Layer> get() const { return layer_; }

 private:
  std::shared_ptr<Layer> layer_;
};

// keras.Input(shape=...): the shape of one sample, without the batch dim. In a Sequential it
// is not a layer of the summary; it lets the model be built (and summarised) before it sees
// data. In a functional model it is the symbolic tensor the graph starts from: an Input
// converts to its SymbolicTensor, and every copy of one Input object is the same tensor.
class Input : public Layer {
 public:
  explicit Input(Shape shape) : shape_(std::move(shape)) {
    for (int64_t d : shape_)
      if (d < 1) throw Error(DLRT_INVALID_ARGUMENT, "Input: every dim must be >= 1");
    if (shape_.empty()) throw Error(DLRT_INVALID_ARGUMENT, "Input: shape must not be empty");
    auto node = std::make_shared<Node>();  // layer null: an input node
    node->outputs = {shape_};
    tensor_ = SymbolicTensor(std::move(node), 0);
  }
  operator SymbolicTensor() const { return tensor_; }  // NOLINT: implicit as keras.Input
  const SymbolicTensor& tensor() const { return tensor_; }
  std::string type() const override { return "InputLayer"; }
  std::string base_name() const override { return "input"; }
  Shape output_shape(const Shape&) const override { return shape_; }
  Value call(CallContext&, Value x, const std::vector<Value>&) const override { return x; }
  bool is_input() const override { return true; }
  const Shape& shape() const { return shape_; }

 private:
  Shape shape_;
  SymbolicTensor tensor_;
};

inline SymbolicTensor Layer::operator()(const SymbolicTensor& x) const {
  return (*this)(std::vector<SymbolicTensor>{x});
}

inline SymbolicTensor Layer::operator()(const std::vector<SymbolicTensor>& xs) const {
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

namespace detail {
// "(None, 4, 4, 8) and (None, 4, 4, 3)" for a message about a layer's input shapes.
inline std::string shapes_string(const std::vector<Shape>& in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i)
    out += (i == 0 ? "" : i + 1 == in.size() ? " and " : ", ") + shape_string(in[i]);
  return out;
}
// TensorFlow's output size along one axis (docs/ops.md): VALID floor((in-k')/s)+1, SAME
// ceil(in/s), k' = (k-1)*d+1 the dilated window. 0 or less means the window does not fit.
inline int64_t window_out(int64_t in, int64_t k, int64_t s, bool same, int64_t d = 1) {
  return same ? (in + s - 1) / s : (in - ((k - 1) * d + 1)) / s + 1;
}
inline bool check_padding(const std::string& p, const std::string& who) {
  if (p == "valid" || p == "VALID") return false;
  if (p == "same" || p == "SAME") return true;
  throw Error(DLRT_INVALID_ARGUMENT, who + ": padding '" + p + "'; expected valid or same");
}
inline void check_size2(const Size2& s, const std::string& what, const std::string& who) {
  if (s[0] < 1 || s[1] < 1) throw Error(DLRT_INVALID_ARGUMENT, who + ": " + what + " must be >= 1");
}
// Keras refuses strides > 1 together with dilation_rate > 1 (its BaseConv).
inline void check_strides_dilation(const Size2& strides, const Size2& dilation,
                                   const std::string& who) {
  if (std::max(strides[0], strides[1]) > 1 && std::max(dilation[0], dilation[1]) > 1)
    throw Error(DLRT_INVALID_ARGUMENT,
                who + ": strides > 1 are not supported together with dilation_rate > 1 (as Keras)");
}
}  // namespace detail

// Conv2D's settings beyond filters and kernel, as Keras' keyword arguments:
//   nn::Conv2D(16, {3, 3}, {.padding = "same", .activation = "relu"})  (designated
//   initializers are C++20; GCC and Clang accept them in C++17 as an extension)
struct Conv2DOptions {
  Size2 strides = {1, 1};
  std::string padding = "valid";  // valid | same
  std::string activation = "linear";
  Initializer kernel_initializer = Initializer::glorot_uniform();
  Initializer bias_initializer = Initializer::zeros();
  Regularizer kernel_regularizer = {};  // e.g. Regularizer::l2(1e-4)
  Size2 dilation_rate = {1, 1};         // Keras refuses it > 1 together with strides > 1
  // Keras' use_bias: false leaves out the bias variable (a conv feeding a
  // BatchNormalization, whose beta is the bias, as in ResNets).
  bool use_bias = true;
  // Keras' groups: the input channels and the filters split into this many groups, each
  // convolved on its own; the kernel is (KH,KW,Ci/groups,filters). Both Ci and filters must
  // be multiples of it.
  int64_t groups = 1;
};

// Conv2D(filters, kernel, strides = (1,1), padding = "valid", activation = linear) on NHWC;
// kernel Glorot-uniform, bias zeros unless the options say otherwise; dilation_rate, groups
// and use_bias as Keras (ops conv2d / conv2d_bias_act with dilations and groups; without a
// bias a linear conv is one conv2d, an activated one conv2d_bias_act with a zero constant
// bias, so the activation stays fused).
class Conv2D : public Layer {
 public:
  Conv2D(int64_t filters, Size2 kernel, const Conv2DOptions& o)
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
  Conv2D(int64_t filters, Size2 kernel, Size2 strides, std::string padding,
         std::string activation = "linear")
      : Conv2D(filters, kernel, options(strides, std::move(padding), std::move(activation))) {}
  // Conv2D(32, {3, 3}, "relu"): stride 1, valid padding. A template so that a braced list
  // ({.padding = "same"}) goes to the options, never to the string.
  template <typename S, typename = std::enable_if_t<std::is_convertible_v<S, std::string>>>
  Conv2D(int64_t filters, Size2 kernel, S&& activation)
      : Conv2D(filters, kernel, {1, 1}, "valid", std::string(std::forward<S>(activation))) {}
  Conv2D(int64_t filters, Size2 kernel) : Conv2D(filters, kernel, {1, 1}, "valid") {}

  std::shared_ptr<Layer> clone() const override { return std::make_shared<Conv2D>(*this); }
  std::string type() const override { return "Conv2D"; }
  std::string base_name() const override { return "conv2d"; }
  Shape output_shape(const Shape& in) const override {
    if (in.size() != 3) throw bad_input(in, "(None, H, W, C)");
    if (in[2] % groups_ != 0)
      throw bad_input(in, "C a multiple of groups (" + std::to_string(groups_) + ")");
    const int64_t h = detail::window_out(in[0], kernel_[0], strides_[0], same_, dilation_[0]);
    const int64_t w = detail::window_out(in[1], kernel_[1], strides_[1], same_, dilation_[1]);
    if (h < 1 || w < 1) throw bad_input(in, "H and W >= the (dilated) kernel with valid padding");
    return {h, w, filters_};
  }
  std::vector<ParamSpec> params(const Shape& in) const override {
    std::vector<ParamSpec> p = {{"kernel",
                                 {kernel_[0], kernel_[1], in.at(2) / groups_, filters_},
                                 kernel_init_,
                                 true,
                                 kernel_reg_}};
    if (use_bias_) p.push_back({"bias", {filters_}, bias_init_, true});
    return p;
  }
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override {
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

  // Batch-norm folding at inference (session.hpp, run_plan): a linear Conv2D whose output
  // y feeds only a BatchNormalization computing y * scale + shift per channel runs as one
  // conv with w' = w * scale (HWIO: scale broadcasts along the output channels, the last
  // dim) and b' = b * scale + shift. The fold is recomputed from the variables on every run
  // (kh*kw*ci*co multiplies), so training moves it along; the normalisation's pass over
  // the activations disappears.
  bool foldable() const { return activation_ == "none"; }
  Value call_scaled(CallContext& c, Value x, const std::vector<Value>& v, Value scale,
                    Value shift) const {
    OpAttrs fused = conv_attrs();
    fused.emplace_back("activation", activation_);
    const Value w = c.graph.op1("mul", {v[0], scale});
    const Value b = use_bias_ ? c.graph.op1("add", {c.graph.op1("mul", {v[1], scale}), shift})
                              : shift;  // no bias: b * scale is 0
    return c.graph.op1("conv2d_bias_act", {x, w, b}, fused, c.node(name_ + "_bn_folded"));
  }

 private:
  OpAttrs conv_attrs() const {
    OpAttrs conv = {{"strides", {strides_[0], strides_[1]}}, {"padding", same_ ? "SAME" : "VALID"}};
    // Only when not the default, so a plain Conv2D builds the op it always built.
    if (dilation_ != Size2{1, 1})
      conv.emplace_back("dilations", std::vector<int64_t>{dilation_[0], dilation_[1]});
    if (groups_ != 1) conv.emplace_back("groups", groups_);
    return conv;
  }
  // (filters) zeros: the bias operand of conv2d_bias_act for a conv without a bias.
  Value zero_bias(CallContext& c) const {
    return c.graph.constant<float>("", {filters_}, std::vector<float>(size_t(filters_), 0.f));
  }
  static Conv2DOptions options(Size2 strides, std::string padding, std::string activation) {
    Conv2DOptions o;
    o.strides = strides;
    o.padding = std::move(padding);
    o.activation = std::move(activation);
    return o;
  }
  int64_t filters_;
  Size2 kernel_, strides_;
  bool same_;
  std::string activation_;
  Initializer kernel_init_, bias_init_;
  Regularizer kernel_reg_;
  Size2 dilation_;
  int64_t groups_;
  bool use_bias_;
};

// Dense's settings beyond units: nn::Dense(10, {.activation = "relu",
// .kernel_regularizer = nn::Regularizer::l2(1e-4)}).
struct DenseOptions {
  std::string activation = "linear";
  Initializer kernel_initializer = Initializer::glorot_uniform();
  Initializer bias_initializer = Initializer::zeros();
  Regularizer kernel_regularizer = {};
};

// Dense(units, activation = linear) on (None, ..., in), along the last axis; kernel
// Glorot-uniform.
class Dense : public Layer {
 public:
  Dense(int64_t units, const DenseOptions& o)
      : units_(units),
        activation_(check_activation(o.activation, "Dense")),
        kernel_init_(o.kernel_initializer),
        bias_init_(o.bias_initializer),
        kernel_reg_(o.kernel_regularizer) {
    if (units < 1) throw Error(DLRT_INVALID_ARGUMENT, "Dense: units must be >= 1");
  }
  // Dense(10, "relu"); a template so that a braced list goes to the options.
  template <typename S, typename = std::enable_if_t<std::is_convertible_v<S, std::string>>>
  Dense(int64_t units, S&& activation)
      : Dense(units, options(std::string(std::forward<S>(activation)))) {}
  explicit Dense(int64_t units) : Dense(units, options("linear")) {}
  std::shared_ptr<Layer> clone() const override { return std::make_shared<Dense>(*this); }
  std::string type() const override { return "Dense"; }
  std::string base_name() const override { return "dense"; }
  // (None, features) -> (None, units); as Keras, a higher-rank input (None, T..., features)
  // is transformed along its last axis -> (None, T..., units) with the same kernel.
  Shape output_shape(const Shape& in) const override {
    if (in.empty()) throw bad_input(in, "(None, ..., features)");
    Shape out = in;
    out.back() = units_;
    return out;
  }
  std::vector<ParamSpec> params(const Shape& in) const override {
    return {{"kernel", {in.back(), units_}, kernel_init_, true, kernel_reg_},
            {"bias", {units_}, bias_init_, true}};
  }
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override {
    const std::string fused = activation_ == "softmax" ? "none" : activation_;
    std::vector<int64_t> dims = x.dims();
    const bool sequence = dims.size() > 2;  // fold (B, T...) into the matmul's rows
    Value rows =
        sequence ? c.graph.op1("reshape", {x}, {{"shape", std::vector<int64_t>{-1, dims.back()}}})
                 : x;
    Value y = c.graph.op1("matmul_bias_act", {rows, v[0], v[1]}, {{"activation", fused}},
                          sequence ? "" : c.node(name_));
    if (sequence) {
      dims.back() = units_;
      y = c.graph.op1("reshape", {y}, {{"shape", dims}}, c.node(name_));
    }
    return activation_ == "softmax" ? apply_activation(c.graph, y, activation_) : y;
  }

 private:
  static DenseOptions options(std::string activation) {
    DenseOptions o;
    o.activation = std::move(activation);
    return o;
  }
  int64_t units_;
  std::string activation_;
  Initializer kernel_init_, bias_init_;
  Regularizer kernel_reg_;
};

// MaxPool2D / AvgPool2D(pool = (2,2), strides = pool, padding = "valid").
class Pool2D : public Layer {
 public:
  Shape output_shape(const Shape& in) const override {
    if (in.size() != 3) throw bad_input(in, "(None, H, W, C)");
    const int64_t h = detail::window_out(in[0], pool_[0], strides_[0], same_);
    const int64_t w = detail::window_out(in[1], pool_[1], strides_[1], same_);
    if (h < 1 || w < 1) throw bad_input(in, "H and W >= the pool size with valid padding");
    return {h, w, in[2]};
  }
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override {
    return c.graph.op1(op_, {x},
                       {{"ksize", {pool_[0], pool_[1]}},
                        {"strides", {strides_[0], strides_[1]}},
                        {"padding", same_ ? "SAME" : "VALID"}},
                       c.node(name_));
  }

 protected:
  Pool2D(std::string op, Size2 pool, Size2 strides, const std::string& padding)
      : op_(std::move(op)),
        pool_(pool),
        strides_(strides[0] == 0 ? pool : strides),
        same_(detail::check_padding(padding, op_)) {
    detail::check_size2(pool_, "pool size", op_);
    detail::check_size2(strides_, "strides", op_);
  }

 private:
  std::string op_;
  Size2 pool_, strides_;
  bool same_;
};

class MaxPool2D : public Pool2D {
 public:
  // strides {0, 0}: the pool size (Keras' strides=None).
  explicit MaxPool2D(Size2 pool = {2, 2}, Size2 strides = {0, 0},
                     const std::string& padding = "valid")
      : Pool2D("max_pool2d", pool, strides, padding) {}
  std::shared_ptr<Layer> clone() const override { return std::make_shared<MaxPool2D>(*this); }
  std::string type() const override { return "MaxPooling2D"; }
  std::string base_name() const override { return "max_pooling2d"; }
};

class AvgPool2D : public Pool2D {
 public:
  explicit AvgPool2D(Size2 pool = {2, 2}, Size2 strides = {0, 0},
                     const std::string& padding = "valid")
      : Pool2D("avg_pool2d", pool, strides, padding) {}
  std::shared_ptr<Layer> clone() const override { return std::make_shared<AvgPool2D>(*this); }
  std::string type() const override { return "AveragePooling2D"; }
  std::string base_name() const override { return "average_pooling2d"; }
};

class Flatten : public Layer {
 public:
  std::shared_ptr<Layer> clone() const override { return std::make_shared<Flatten>(*this); }
  std::string type() const override { return "Flatten"; }
  std::string base_name() const override { return "flatten"; }
  Shape output_shape(const Shape& in) const override { return {element_count(in)}; }
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override {
    return c.graph.op1("flatten", {x}, {}, c.node(name_));
  }
};

// Keras' Reshape(target_shape): (None, in...) -> (None, target_shape...), the elements in
// row-major order unchanged; one dim of target_shape may be -1 (inferred). INVALID_ARGUMENT
// when the element counts differ.
class Reshape : public Layer {
 public:
  explicit Reshape(Shape target_shape) : target_(std::move(target_shape)) {
    int unknown = 0;
    for (int64_t d : target_) {
      if (d == -1) ++unknown;
      else if (d < 1) throw Error(DLRT_INVALID_ARGUMENT, "Reshape: dims must be >= 1 or one -1");
    }
    if (target_.empty() || unknown > 1)
      throw Error(DLRT_INVALID_ARGUMENT, "Reshape: target_shape " + shape_string(target_) +
                                             " needs at least one dim and at most one -1");
  }
  std::shared_ptr<Layer> clone() const override { return std::make_shared<Reshape>(*this); }
  std::string type() const override { return "Reshape"; }
  std::string base_name() const override { return "reshape"; }
  Shape output_shape(const Shape& in) const override {
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
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override {
    const std::vector<int64_t> xd = x.dims();
    const Shape out = output_shape(Shape(xd.begin() + 1, xd.end()));
    std::vector<int64_t> dims = {xd.at(0)};
    dims.insert(dims.end(), out.begin(), out.end());
    return c.graph.op1("reshape", {x}, {{"shape", dims}}, c.node(name_));
  }

 private:
  Shape target_;
};

// Dropout(rate): in the training step y = x * mask, mask = (u >= rate) / (1 - rate); identity
// in evaluation and prediction. The mask stream is keyed by derive_seed(model seed, name) and
// the step executable's run count (the op's rng_offset), which fit() sets to the model's step
// count, so a resumed run draws the masks of the uninterrupted one. Under a strategy, replica
// g > 0 keys its stream by derive_seed(seed, "replica/g") instead of the model seed.
class Dropout : public Layer {
 public:
  explicit Dropout(double rate) : rate_(rate) {
    if (!(rate >= 0.0 && rate < 1.0))
      throw Error(DLRT_INVALID_ARGUMENT, "Dropout: rate must be in [0, 1)");
  }
  std::shared_ptr<Layer> clone() const override { return std::make_shared<Dropout>(*this); }
  std::string type() const override { return "Dropout"; }
  std::string base_name() const override { return "dropout"; }
  Shape output_shape(const Shape& in) const override { return in; }
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override {
    if (!c.training || rate_ == 0.0) return x;
    return c.graph.op1(
        "dropout", {x},
        {{"rate", rate_}, {"seed", static_cast<int64_t>(derive_seed(c.seed, name_))}},
        c.node(name_));
  }

 private:
  double rate_;
};

// An activation on its own: ReLU(), Sigmoid(), Tanh(), Softmax().
class ActivationLayer : public Layer {
 public:
  Shape output_shape(const Shape& in) const override { return in; }
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override {
    return apply_activation(c.graph, x, activation_);
  }
  std::string type() const override { return type_; }
  std::string base_name() const override { return base_; }
  const std::string& activation() const { return activation_; }

 protected:
  ActivationLayer(std::string activation, std::string type, std::string base)
      : activation_(std::move(activation)), type_(std::move(type)), base_(std::move(base)) {}

 private:
  std::string activation_, type_, base_;
};

class ReLU : public ActivationLayer {
 public:
  ReLU() : ActivationLayer("relu", "ReLU", "re_lu") {}
  std::shared_ptr<Layer> clone() const override { return std::make_shared<ReLU>(*this); }
};
class Softmax : public ActivationLayer {
 public:
  Softmax() : ActivationLayer("softmax", "Softmax", "softmax") {}
  std::shared_ptr<Layer> clone() const override { return std::make_shared<Softmax>(*this); }
};
// Keras has no Sigmoid/Tanh layer classes; these are its Activation("sigmoid"/"tanh").
class Sigmoid : public ActivationLayer {
 public:
  Sigmoid() : ActivationLayer("sigmoid", "Activation", "activation") {}
  std::shared_ptr<Layer> clone() const override { return std::make_shared<Sigmoid>(*this); }
};
class Tanh : public ActivationLayer {
 public:
  Tanh() : ActivationLayer("tanh", "Activation", "activation") {}
  std::shared_ptr<Layer> clone() const override { return std::make_shared<Tanh>(*this); }
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_LAYERS_HPP_
