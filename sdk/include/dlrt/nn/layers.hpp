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
  std::string node(const std::string& layer_name) const { return scope + layer_name; }
};

// "linear" (or "") = none, "relu", "sigmoid", "tanh", "softmax"; anything else is refused
// when the layer is made.
std::string check_activation(const std::string& a, const std::string& who);

Value apply_activation(Graph& g, Value x, const std::string& act);

class Layer {
 public:
  virtual ~Layer() = default;
  virtual std::string type() const = 0;       // the class, as Keras' summary shows it
  virtual std::string base_name() const = 0;  // the default name before uniquing: "conv2d"
  // The output shape for input shape `in` (batch dim left out); INVALID_ARGUMENT naming the
  // layer when `in` does not fit.
  virtual Shape output_shape(const Shape& in) const = 0;
  virtual std::vector<ParamSpec> params(const Shape& /*in*/) const;
  // Builds the ops of this layer on x (B, in...); `vars` are the params() in order.
  virtual Value call(CallContext& c, Value x, const std::vector<Value>& vars) const = 0;
  virtual bool is_input() const;
  // How many integer ids the layer takes as input (Embedding's input_dim), 0 when it takes
  // float features. When every layer reading a model's input takes ids, the model feeds
  // i32/i64 x unchanged (not cast to f32) and checks each id on the host (session.hpp).
  virtual int64_t input_ids() const;

  // The same for a layer called on several tensors (Add, Concatenate override these). The
  // defaults take exactly one input and forward to the single-input versions above.
  virtual Shape output_shape_multi(const std::vector<Shape>& in) const;
  virtual std::vector<ParamSpec> params_multi(const std::vector<Shape>& in) const;
  virtual Value call_multi(CallContext& c, const std::vector<Value>& xs,
                           const std::vector<Value>& vars) const;

  // A copy of this layer as the most derived type, for calls on symbolic tensors (the node
  // keeps it). Null (the default) means the layer can only be used in a Sequential.
  virtual std::shared_ptr<Layer> clone() const;

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
  void set_dtype_policy(const std::string& policy);
  // Layers whose arithmetic stays f32 under a mixed policy (the normalisations: their
  // statistics need f32's precision); their float inputs are cast to f32 instead.
  virtual bool float32_only() const;

 protected:
  std::string name_;  // set by the model: "conv2d", "conv2d_1", ...
  bool trainable_ = true;
  std::string dtype_policy_ = global_policy();
  Error bad_input(const Shape& in, const std::string& expected) const;
  void check_single(size_t inputs) const;

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

namespace detail {
// "(None, 4, 4, 8) and (None, 4, 4, 3)" for a message about a layer's input shapes.
std::string shapes_string(const std::vector<Shape>& in);
// TensorFlow's output size along one axis (docs/ops.md): VALID floor((in-k')/s)+1, SAME
// ceil(in/s), k' = (k-1)*d+1 the dilated window. 0 or less means the window does not fit.
inline int64_t window_out(int64_t in, int64_t k, int64_t s, bool same, int64_t d = 1) {
  return same ? (in + s - 1) / s : (in - ((k - 1) * d + 1)) / s + 1;
}
bool check_padding(const std::string& p, const std::string& who);
void check_size2(const Size2& s, const std::string& what, const std::string& who);
// Keras refuses strides > 1 together with dilation_rate > 1 (its BaseConv).
void check_strides_dilation(const Size2& strides, const Size2& dilation, const std::string& who);
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
  Conv2D(int64_t filters, Size2 kernel, const Conv2DOptions& o);
  Conv2D(int64_t filters, Size2 kernel, Size2 strides, std::string padding,
         std::string activation = "linear")
      : Conv2D(filters, kernel, options(strides, std::move(padding), std::move(activation))) {}
  // Conv2D(32, {3, 3}, "relu"): stride 1, valid padding. A template so that a braced list
  // ({.padding = "same"}) goes to the options, never to the string.
  template <typename S, typename = std::enable_if_t<std::is_convertible_v<S, std::string>>>
  Conv2D(int64_t filters, Size2 kernel, S&& activation)
      : Conv2D(filters, kernel, {1, 1}, "valid", std::string(std::forward<S>(activation))) {}
  Conv2D(int64_t filters, Size2 kernel) : Conv2D(filters, kernel, {1, 1}, "valid") {}

  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
  Shape output_shape(const Shape& in) const override;
  std::vector<ParamSpec> params(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override;

 private:
  OpAttrs conv_attrs() const;
  // (filters) zeros: the bias operand of conv2d_bias_act for a conv without a bias.
  Value zero_bias(CallContext& c) const;
  static Conv2DOptions options(Size2 strides, std::string padding, std::string activation);
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
  Dense(int64_t units, const DenseOptions& o);
  // Dense(10, "relu"); a template so that a braced list goes to the options.
  template <typename S, typename = std::enable_if_t<std::is_convertible_v<S, std::string>>>
  Dense(int64_t units, S&& activation)
      : Dense(units, options(std::string(std::forward<S>(activation)))) {}
  explicit Dense(int64_t units) : Dense(units, options("linear")) {}
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
  // (None, features) -> (None, units); as Keras, a higher-rank input (None, T..., features)
  // is transformed along its last axis -> (None, T..., units) with the same kernel.
  Shape output_shape(const Shape& in) const override;
  std::vector<ParamSpec> params(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override;

 private:
  static DenseOptions options(std::string activation);
  int64_t units_;
  std::string activation_;
  Initializer kernel_init_, bias_init_;
  Regularizer kernel_reg_;
};

// MaxPool2D / AvgPool2D(pool = (2,2), strides = pool, padding = "valid").
class Pool2D : public Layer {
 public:
  Shape output_shape(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override;

 protected:
  Pool2D(std::string op, Size2 pool, Size2 strides, const std::string& padding);

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
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
};

class AvgPool2D : public Pool2D {
 public:
  explicit AvgPool2D(Size2 pool = {2, 2}, Size2 strides = {0, 0},
                     const std::string& padding = "valid")
      : Pool2D("avg_pool2d", pool, strides, padding) {}
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
};

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

// Dropout(rate): in the training step y = x * mask, mask = (u >= rate) / (1 - rate); identity
// in evaluation and prediction. The mask stream is keyed by derive_seed(model seed, name) and
// the step executable's run count (the op's rng_offset), which fit() sets to the model's step
// count, so a resumed run draws the masks of the uninterrupted one. Under a strategy, replica
// g > 0 keys its stream by derive_seed(seed, "replica/g") instead of the model seed.
class Dropout : public Layer {
 public:
  explicit Dropout(double rate);
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
  Shape output_shape(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override;

 private:
  double rate_;
};

// An activation on its own: ReLU(), Sigmoid(), Tanh(), Softmax().
class ActivationLayer : public Layer {
 public:
  Shape output_shape(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>&) const override;
  std::string type() const override;
  std::string base_name() const override;
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
  std::shared_ptr<Layer> clone() const override;
};
class Softmax : public ActivationLayer {
 public:
  Softmax() : ActivationLayer("softmax", "Softmax", "softmax") {}
  std::shared_ptr<Layer> clone() const override;
};
// Keras has no Sigmoid/Tanh layer classes; these are its Activation("sigmoid"/"tanh").
class Sigmoid : public ActivationLayer {
 public:
  Sigmoid() : ActivationLayer("sigmoid", "Activation", "activation") {}
  std::shared_ptr<Layer> clone() const override;
};
class Tanh : public ActivationLayer {
 public:
  Tanh() : ActivationLayer("tanh", "Activation", "activation") {}
  std::shared_ptr<Layer> clone() const override;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_LAYERS_HPP_
