// dlrt/nn/layer.hpp: the Layer interface every Keras-style layer implements, and what its
// `call` builds with (CallContext). The layers themselves are in their own headers
// (layers.hpp includes the core ones).
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
// Every built-in layer overrides it; tests/nn/nn_functional_layers_test.cc calls each one on
// symbolic tensors, so a new built-in layer belongs in that test's list.
#ifndef DLRT_NN_LAYER_HPP_
#define DLRT_NN_LAYER_HPP_

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
  // The same, recording `self` itself in the node rather than a copy: for a binding whose
  // layer objects users keep and change (Python's: `layer.trainable = False` after the call
  // must reach the model). operator() copies because a C++ program calls temporaries
  // (nn::Dense(10)(x)).
  static SymbolicTensor call_shared(const std::shared_ptr<Layer>& self,
                                    const std::vector<SymbolicTensor>& xs);

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
  // INVALID_ARGUMENT for a call on no tensors, an invalid tensor, or of an Input.
  void check_call(const std::vector<SymbolicTensor>& xs) const;
  // The node of `layer` called on xs (its output shape checked now).
  static SymbolicTensor node_of(const std::shared_ptr<Layer>& layer,
                                const std::vector<SymbolicTensor>& xs, bool shared);
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
  // A layer already shared (a binding's layer object): the model uses this very object, so
  // its name and trainable flag are the model's.
  explicit LayerRef(std::shared_ptr<Layer> layer) : layer_(std::move(layer)) {
    if (layer_ == nullptr) throw Error(DLRT_INVALID_ARGUMENT, "LayerRef: null layer");
  }
  std::shared_ptr<Layer> get() const { return layer_; }

 private:
  std::shared_ptr<Layer> layer_;
};

namespace detail {
// "(None, 4, 4, 8) and (None, 4, 4, 3)" for a message about a layer's input shapes.
std::string shapes_string(const std::vector<Shape>& in);
}  // namespace detail

}  // namespace dlrt::nn

#endif  // DLRT_NN_LAYER_HPP_
