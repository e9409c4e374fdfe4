// dlrt/nn/model.hpp: Model and Sequential — Keras' model API over dlrt graphs.
//
//   dlrt::nn::Sequential model(ctx, {nn::Input({28, 28, 1}), nn::Conv2D(32, {3, 3}, "relu"),
//                                    nn::MaxPool2D(), nn::Flatten(), nn::Dense(10)});
// or the same network written functionally (Keras' functional API; layers.hpp, symbolic.hpp):
//   auto in = nn::Input({28, 28, 1});
//   nn::SymbolicTensor x = nn::MaxPool2D()(nn::Conv2D(32, {3, 3}, "relu")(in));
//   nn::Model model(ctx, in, nn::Dense(10)(nn::Flatten()(x)));   // or ({in1, in2}, {out1, ...})
// then, for either:
//   model.compile(nn::Adam(1e-3), nn::SparseCategoricalCrossentropy(true), {"accuracy"});
//   model.summary();
//   nn::History h = model.fit(x_train, y_train, fit_options);
//   nn::Logs test = model.evaluate(x_test, y_test, 64);
// A model of several inputs or outputs takes one array per input and per output, in the order
// of its inputs and outputs (Keras' lists of arrays):
//   nn::Model two(ctx, {top, bottom}, {classes, regress});
//   two.fit({x_top, x_bottom}, {y_classes, y_regress}, fit_options);
//   std::vector<nn::Array> out = two.predict({x_top, x_bottom});   // one array per output
//
// How it runs (session.hpp has the graphs): compile() fixes the plan — layer names, shapes,
// the state variables (weights, optimizer slots, "optimizer/iterations") and their seeds —
// and fit() builds one training-step executable over a graph holding the training set on the
// device; every step feeds only the batch's indices. Evaluation and prediction are further
// executables of the same graph, sharing its variables.
//
// Devices: everything the model builds requests the device of the nn::DeviceScope(s) alive at
// compile() plus CompileConfig::device (innermost), in the grammar of dlrt device specs; with
// neither, placement chooses per op (GPU before CPU). CompileConfig::device "auto" compiles with
// dlrt's auto device instead (CompileOptions::auto_device): one device for the whole model,
// the one that runs the most of its ops (never the reference oracle unless named), logged and
// readable as train_executable().auto_device(). The training set lives there too.
// Strategies: a model compiled inside an nn::StrategyScope trains data-parallel over the
// strategy's replicas (distribute.hpp; replicated.hpp has how).
// Model is (inputs, outputs) over a graph of layer calls (functional_graph.hpp orders it);
// Sequential is a Model whose graph is the chain of its layers, built when its input shape is
// known. Both plan and train through the same code, so a Sequential and the same network
// written functionally build the same graph (same variable names, seeds and ops) and train
// bit for bit the same. A functional model may have several inputs and outputs: every array of
// a sample is gathered with the same index, the compiled loss applies to every output and the
// loss that trains is their sum (weighted by CompileConfig::loss_weights), as in Keras. Logs
// are "loss", then (several outputs) "<output layer>_loss" per output, then each metric per
// output as "<output layer>_<metric>"; a model of one output logs what it always did.
// Errors are dlrt::Error (INVALID_ARGUMENT for a model or data that does not fit, naming the
// layer or array and what was expected); nothing aborts.
#ifndef DLRT_NN_MODEL_HPP_
#define DLRT_NN_MODEL_HPP_

#include <cstdint>
#include <initializer_list>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/callbacks.hpp"
#include "dlrt/nn/data.hpp"
#include "dlrt/nn/distribute.hpp"
#include "dlrt/nn/merging.hpp"
#include "dlrt/nn/layers.hpp"
#include "dlrt/nn/losses.hpp"
#include "dlrt/nn/metrics.hpp"
#include "dlrt/nn/optimizers.hpp"
#include "dlrt/nn/progress.hpp"

namespace dlrt::nn {

class Model;
class Sequential;

namespace detail {
// The detail types behind a model (plan.hpp, session.hpp; the others are libdlrt_nn's own).
struct Plan;
class Session;
class ReplicaSet;
struct FunctionalGraph;
// Host arrays as the data path takes them: one per model input (x) or output (y), in order
// (the same alias as plan.hpp's).
using ArrayRefs = std::vector<const Array*>;
}  // namespace detail

// One variable of a model's state as trainable_variables() lists it: the model and the
// variable's name there ("dense/kernel"). nn::Tape::minimize takes lists of them.
struct Variable {
  Model* model = nullptr;
  std::string name;
};

namespace detail {
// What holds a model's newest weights while a custom step trains them (train_step.hpp):
// give_back writes them into the model (Model::set_state) and lets go; detach lets go
// without writing (the model is recompiled or destroyed).
class StateHolder {
 public:
  virtual void give_back(Model& model) = 0;
  virtual void detach(Model& model) = 0;

 protected:
  ~StateHolder() = default;
};
// What builds a model called on graph Values into a custom step's graph (train_step.hpp's
// Tape).
class ModelCaller {
 public:
  virtual std::vector<Value> call_model(Model& model, const std::vector<Value>& inputs,
                                        bool training) = 0;

 protected:
  ~ModelCaller() = default;
};
// The tape of the custom step being traced on this thread; null outside a step's function.
// Held in libdlrt_nn, once per process.
ModelCaller*& active_tape();
}  // namespace detail

struct CompileConfig {
  // e.g. "/CPU:0", "/GPU:0"; "" = scopes / placement per op; "auto" = one device picked by
  // the ops it runs (dlrt_compile_options.auto_device)
  std::string device;
  uint64_t seed = 0;                  // initial weights (per variable) and shuffling
  bool log_device_placement = false;  // TensorFlow's placement log, at every compile
  // Replay a captured step (CUDA Graphs) where the device offers capture; false runs every
  // step kernel by kernel (for comparison: dlbench train --no-capture).
  bool use_capture = true;
  // A dtype policy for every layer of this model ("float32", "mixed_bfloat16",
  // "mixed_float16"; mixed_precision.hpp); "" = each layer's own (the global policy when it
  // was made).
  std::string dtype_policy;
  // At inference (evaluate, predict): a linear Conv2D whose output only a channel-last
  // nn builds every layer as it is; the core's graph passes (docs/design.md, "Graph passes")
  // fold and fuse when the model's executables compile. These switch them off, for
  // comparisons and for debugging a model op by op.
  //
  // fold_batch_norm: a Conv2D or Dense whose output only a BatchNormalization reads runs, at
  // inference, as one conv with the normalisation folded into its weights (w * scale,
  // b * scale + shift, from the variables on every run), as TensorFlow's and onnxruntime's
  // graph optimisers fold it. Training steps never fold. false: the pass fold_batch_norm off.
  bool fold_batch_norm = true;
  // fuse_batch_norm_relu: a BatchNormalization whose output only a ReLU reads (ReLU(),
  // Activation("relu")) runs as one op with activation relu, and its backward as one op
  // (batch_norm_relu_grad rebuilds the mask from x): one pass over the activations fewer each
  // way, in training and inference. Conv2D/Dense + bias + activation fuse in the same pass.
  // false: the pass fuse_bias_activation off (no activation fuses into anything).
  bool fuse_batch_norm_relu = true;
  // fuse_batch_norm_add_relu: a residual block's tail, ReLU(Add([BatchNormalization(x),
  // shortcut])), where the BatchNormalization's output is read only by that Add (of two
  // inputs of one shape) and the Add's only by that ReLU (and its gradient): a training step
  // runs it as one op, batch_norm_add_relu_train, whose backward op also gives the shortcut's
  // gradient (four passes over the activations instead of eight or nine forward, one fewer
  // backward). Trainable layers in training steps (inference folds instead); not under a
  // mixed-precision policy (the Add computes in the policy's dtype, behind a cast). false: the
  // pass fuse_residual_tail off.
  bool fuse_batch_norm_add_relu = true;
  // More pass switches, applied after the three above, in the core's syntax
  // (CompileOptions::with_graph_passes): "none", "-fold_constants", ... "" adds nothing.
  std::string graph_passes;
  // Keras' loss_weights: one weight per model output, in the order of its outputs; the loss
  // that trains (and "loss" in the logs) is sum_k weight_k * loss_k. Empty: 1 for each.
  std::vector<double> loss_weights;
};

// Profile `steps` training steps from global step `first` (0-based, counted in this fit) and
// write their Chrome trace (Perfetto) to `path`.
struct TraceOptions {
  std::string path;  // "" = off
  int64_t first = 10;
  int64_t steps = 20;
};

struct FitOptions {
  int64_t epochs = 1;         // train epochs [initial_epoch, epochs)
  int64_t initial_epoch = 0;  // resume: model.epoch() after load_weights
  int64_t batch_size = 32;
  const Array* validation_x = nullptr;  // validation data, evaluated after every epoch
  const Array* validation_y = nullptr;
  // The same for a model of several inputs or outputs: one array per input and per output
  // (evaluate's vector form). Give these or validation_x/validation_y, not both.
  const std::vector<Array>* validation_xs = nullptr;
  const std::vector<Array>* validation_ys = nullptr;
  bool shuffle = true;  // epoch e's order is epoch_order(seed, e): resume replays it exactly
  std::vector<std::shared_ptr<Callback>> callbacks;
  ProgressOptions progress;
  TraceOptions trace;
  // Multi-worker: ranks other than 0 print progress too (by default they are quiet).
  bool all_ranks_progress = false;
};

class Model {
 public:
  // keras.Model(inputs, outputs): the graph of layer calls from `inputs` (nn::Input tensors)
  // to `outputs`. INVALID_ARGUMENT for a cycle, an output not reachable from the inputs (a
  // tensor of another model's inputs), or an input that is not an Input.
  Model(const Context& ctx, const SymbolicTensor& input, const SymbolicTensor& output,
        std::string name = "functional");
  Model(const Context& ctx, const std::vector<SymbolicTensor>& inputs,
        const std::vector<SymbolicTensor>& outputs, std::string name = "functional");
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  virtual ~Model();
  void compile(const Optimizer& optimizer, const Loss& loss,
               const std::vector<std::string>& metrics = {}, const CompileConfig& config = {}) {
    compile_plan(&optimizer, &loss, metrics, config);
  }
  // compile() for inference (predict) and custom steps (nn::TrainStep, train_step.hpp): the
  // plan, devices and seed, no optimizer or loss (Keras' compile() without arguments). fit,
  // evaluate and train_on_batch then refuse with FAILED_PRECONDITION.
  void compile(const CompileConfig& config = {}) { compile_plan(nullptr, nullptr, {}, config); }

  // ---- trainable flags (Keras' layer.trainable / model.trainable) ----
  // Freezes (false) or unfreezes every layer. As in Keras, fit's step takes the flags as they
  // are at compile(): compile again after changing them. trainable_variables() reads them now.
  void set_trainable(bool trainable);
  // The layer named `name` (Keras' get_layer); NOT_FOUND naming the model's layers otherwise.
  Layer& get_layer(const std::string& name) const;
  // The weights the gradients of a custom step may update (nn::Tape::minimize): every
  // trainable parameter of a layer whose trainable flag is set, in plan order. Builds the
  // plan (without optimizer) when the model has an Input and was not compiled.
  std::vector<Variable> trainable_variables();

  // Keras' train_on_batch / test_on_batch: one training step on (x, y) as one batch, and the
  // loss and metrics of (x, y) without updates. Both return {"loss", ...metrics} (fit's log
  // names). The step is fit's, compiled for this batch size (a new size compiles again,
  // keeping the state). The vector forms take one array per input and per output.
  Logs train_on_batch(const Array& x, const Array& y) { return train_on_batch_of({&x}, {&y}); }
  Logs train_on_batch(const std::vector<Array>& xs, const std::vector<Array>& ys) {
    return train_on_batch_of(refs(xs), refs(ys));
  }
  Logs test_on_batch(const Array& x, const Array& y) { return evaluate(x, y, x.rows()); }
  Logs test_on_batch(const std::vector<Array>& xs, const std::vector<Array>& ys) {
    return evaluate(xs, ys, xs.empty() ? 1 : xs[0].rows());
  }

  // Called inside an nn::TrainStep's function (train_step.hpp): the model's outputs on
  // `inputs` (B, input...) with `training` behaviour (Dropout, BatchNormalization), built into
  // the step's graph over the step's copy of the weights. FAILED_PRECONDITION outside a step.
  std::vector<Value> operator()(const std::vector<Value>& inputs, bool training = true);
  // model({x}) and model({a, b}): the vector form (a braced list would otherwise pick the
  // one-Value form below for a single element).
  std::vector<Value> operator()(std::initializer_list<Value> inputs, bool training = true) {
    return (*this)(std::vector<Value>(inputs), training);
  }
  Value operator()(const Value& input, bool training = true);

 private:
  void compile_plan(const Optimizer* optimizer, const Loss* loss,
                    const std::vector<std::string>& metrics, const CompileConfig& config);

 public:
  // Keras' summary table (layer, output shape, parameter count, totals); a functional model's
  // has Keras' "Connected to" column too.
  void summary(std::ostream& out = std::cout) const;

  History fit(const Array& x, const Array& y, const FitOptions& options = {}) {
    return fit_of({&x}, {&y}, options);
  }
  // Several inputs or outputs: xs[i] feeds input i, ys[k] holds output k's targets (the order
  // of the Model's inputs and outputs); every array has the same number of samples.
  History fit(const std::vector<Array>& xs, const std::vector<Array>& ys,
              const FitOptions& options = {}) {
    return fit_of(refs(xs), refs(ys), options);
  }
  // {"loss", mean loss}, then each metric, over all of x/y (several outputs: fit's log names).
  Logs evaluate(const Array& x, const Array& y, int64_t batch_size = 32) {
    return evaluate_of({&x}, {&y}, batch_size);
  }
  Logs evaluate(const std::vector<Array>& xs, const std::vector<Array>& ys,
                int64_t batch_size = 32) {
    return evaluate_of(refs(xs), refs(ys), batch_size);
  }
  // The model's output for x, f32 (N, output...); a model of several outputs is refused
  // (INVALID_ARGUMENT): the vector form returns them all.
  Array predict(const Array& x, int64_t batch_size = 32);
  // Every output for xs (one array per input), f32 (N, output_k...), in the order of the
  // model's outputs.
  std::vector<Array> predict(const std::vector<Array>& xs, int64_t batch_size = 32) {
    return predict_of(refs(xs), batch_size);
  }
  // The model's prediction (its inference form: no dropout, batch norm with its moving
  // statistics) as an ONNX model at `path` (opset 17; dlrt_graph_export_onnx): the model's
  // inputs in order, named "input", "input_1", ... (indexed_name), each of its input shape,
  // its outputs "output", "output_1", ..., the batch dim the symbol "N"; the weights are the
  // current ones. onnxruntime and dlrt::InferenceSession run it (docs/onnx.md).
  // `input_dtypes`: one per input, or one for all; empty: int64 for an input that only
  // Embeddings read (ids), float32 for the others. Errors: UNIMPLEMENTED names a layer's op
  // that has no ONNX form yet; INVALID_ARGUMENT for a count of dtypes other than 0, 1 or the
  // number of inputs.
  void save_onnx(const std::string& path, const std::vector<dlrt_dtype>& input_dtypes = {});
  void save_onnx(const std::string& path, dlrt_dtype input_dtype) {
    save_onnx(path, std::vector<dlrt_dtype>{input_dtype});
  }

  // ---- state: weights, optimizer slots, the step count ----
  struct NamedValue {
    std::string name;
    Shape dims;
    std::vector<float> values;
  };
  std::vector<NamedValue> state();  // every state variable, in plan order
  // Under a strategy, local replica `replica`'s copy of the state (they stay identical);
  // without one, replica 0 is the state. OUT_OF_RANGE past the local replicas.
  std::vector<NamedValue> replica_state(size_t replica);
  size_t num_local_replicas();
  // Overwrites the variables named in `values` (shapes must match; unknown names are refused).
  void set_state(const std::vector<NamedValue>& values);
  // Checkpoints (safetensors; nn/checkpoint.hpp): every state variable, and epoch, step and
  // seed in __metadata__. load_weights restores them all and epoch().
  void save_weights(const std::string& path);
  void load_weights(const std::string& path);

  int64_t epoch() const { return epoch_; }  // epochs completed (restored by load_weights)
  // Keras' model.stop_training: a callback sets it (EarlyStopping does) and fit stops after
  // the epoch whose on_epoch_end set it. fit clears it when it starts.
  bool stop_training = false;
  // Keras' `model.optimizer.learning_rate = lr` (LearningRateScheduler does it before each
  // epoch): steps from now on use `lr` instead of the optimizer's rate or schedule, until
  // clear_learning_rate(). learning_rate() is the rate the next step uses (the override, else
  // the optimizer's at the steps done); FAILED_PRECONDITION before compile with an optimizer.
  void set_learning_rate(double lr);
  void clear_learning_rate() { learning_rate_override_.reset(); }
  double learning_rate();
  uint64_t seed() const { return config_.seed; }
  const std::string& name() const { return name_; }
  // Every layer once (a shared layer too), in the order they are called; no Input.
  const std::vector<std::shared_ptr<Layer>>& layers() const { return layers_; }
  bool is_sequential() const { return sequential_; }
  size_t num_inputs() const;
  size_t num_outputs() const;
  // Keras' model.input_names / output_names: the Input layers' names ("input", "input_1", ...)
  // and the names of the layers making the outputs (an output made twice by one shared layer,
  // or a repeated output, gets "_<k>" after the first), in order. They name arrays in errors
  // and the per-output entries of the logs.
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
  // Each output's shape without the batch dim, once the model is built (compile, or an Input
  // given): (10) for Dense(10). Empty before.
  const std::vector<Shape>& output_shapes() const { return output_shapes_; }
  // The training step's executable (placement dumps, profiling); fit() must have run.
  // Under a strategy: replica 0's executable of gradients.
  Executable& train_executable();
  bool has_plan() const { return plan_ != nullptr; }
  bool has_optimizer() const { return optimizer_ != nullptr; }
  const detail::Plan& plan() const;

  // Used by nn::DeviceScope.
  void push_device(const std::string& spec) { scopes_.push_back(spec); }
  void pop_device() {
    if (!scopes_.empty()) scopes_.pop_back();
  }

 protected:
  // For Sequential: no graph yet; it is the chain of layers_ once the input shape is known.
  Model(const Context& ctx, std::string name);

 private:
  // Fixes the plan for these input shapes: a Sequential's chain is made here, a functional
  // model's graph was made by its constructor.
  void make_plan(const std::vector<Shape>& inputs);
  void sequential_summary(std::ostream& out) const;
  void functional_summary(std::ostream& out) const;
  static detail::ArrayRefs refs(const std::vector<Array>& arrays) {
    detail::ArrayRefs out;
    for (const Array& a : arrays) out.push_back(&a);
    return out;
  }
  History fit_of(const detail::ArrayRefs& xs, const detail::ArrayRefs& ys, const FitOptions& o);
  Logs evaluate_of(const detail::ArrayRefs& xs, const detail::ArrayRefs& ys, int64_t batch_size);
  std::vector<Array> predict_of(const detail::ArrayRefs& xs, int64_t batch_size);
  Logs train_on_batch_of(const detail::ArrayRefs& xs, const detail::ArrayRefs& ys);
  // The names of a step's results (Plan::results): "loss", each output's "<name>_loss" when
  // there are several, then each metric per output ("<name>_<metric>" when several).
  std::vector<std::string> log_names() const;
  // Logs from a step's results: the losses divided by `loss_rows`, the metric counts by
  // `count_rows`.
  Logs logs_of(const std::vector<double>& results, double loss_rows, double count_rows) const;
  // This model as a Sequential, or null (callbacks' Sequential& hooks).
  Sequential* as_sequential();
  // Evaluation, prediction and state go through this one (replica 0 under a strategy).
  detail::Session& session();
  detail::ReplicaSet& replicas();
  // Every session holding the model's state: one, or one per replica.
  std::vector<detail::Session*> all_sessions();
  void fit_prepare(const detail::ArrayRefs& xs, const detail::ArrayRefs& ys, int64_t batch);
  // Writes the optimizer's rate for the step after `steps_done` into every session's
  // "optimizer/learning_rate" when it differs from `*written` (the value last written, NaN
  // when none), and remembers it there.
  void write_learning_rate(int64_t steps_done, float* written);
  void set_state_of(detail::Session& s, const std::vector<NamedValue>& values);
  Executable& step_executable();
  // x (named `xn` in errors) for a model input whose layers take ids (Embedding): i32 or i64,
  // every id in [0, ids); checked here on the host, so a bad id is the same INVALID_ARGUMENT on
  // every device.
  static void check_ids(const Array& x, const std::string& xn, int64_t ids, const std::string& who);
  // "x" when a model takes one array of the kind, else "x[i]": how errors name an array.
  static std::string array_name(const char* kind, size_t i, size_t count);
  static std::string joined(const std::vector<std::string>& names);
  // The data of fit/evaluate (ys given) or predict (ys null): one x per model input, one y per
  // output, all with the same number of samples; each x of its input's sample shape and dtype
  // (u8 images or f32 features; i32/i64 ids for an input read by Embeddings), each y checked by
  // the loss against its output's shape. INVALID_ARGUMENT naming the array otherwise.
  void check_data(const detail::ArrayRefs& xs, const detail::ArrayRefs* ys, const std::string& who);

  // A custom step (nn::TrainStep) that holds the newest values of this model's weights: it
  // was given them to train, and gives them back before anything here reads or writes the
  // model's own sessions (the "holder" hand-over of train_step.hpp).
  void reclaim();
  // compile() and the destructor: the holder keeps its copy but no longer owes it here.
  void detach_holder();
  // Builds the plan without an optimizer when the model can be built and is not: a functional
  // model, or a Sequential with an Input (predict and custom steps need no compile()).
  void ensure_plan(const std::string& who);
  void require_loss(const std::string& who) const;
  friend class TrainStep;
  friend class Tape;

  const Context& ctx_;
  std::string name_;
  detail::StateHolder* holder_ = nullptr;

 protected:
  bool sequential_ = false;
  std::vector<std::shared_ptr<Layer>> layers_;
  std::map<std::string, int> counts_;  // Sequential: names given so far, by base name
  std::optional<Shape> input_;         // Sequential: the Input's shape, if it has one

 private:
  // A functional model's graph; a Sequential's once planned (empty before).
  std::unique_ptr<detail::FunctionalGraph> graph_;
  std::vector<std::string> scopes_, scopes_at_compile_;
  std::shared_ptr<Optimizer> optimizer_;
  std::shared_ptr<Loss> loss_;
  std::vector<std::shared_ptr<Metric>> metrics_;
  CompileConfig config_;
  std::shared_ptr<detail::Plan> plan_;
  std::vector<Shape> output_shapes_;  // per output, batch left out
  std::unique_ptr<detail::Session> session_;
  std::shared_ptr<dlrt::Strategy> strategy_;   // set by compile() inside a StrategyScope
  std::vector<std::string> strategy_devices_;  // its local replicas' devices
  std::unique_ptr<detail::ReplicaSet> replicas_;
  int64_t epoch_ = 0;
  std::optional<double> learning_rate_override_;
};

// keras.Sequential: a Model whose graph is its layers one after another. Layers are named as
// Keras would ("conv2d", "conv2d_1", ...) when added; an Input first sets the input shape,
// else the first fit() does.
class Sequential : public Model {
 public:
  explicit Sequential(const Context& ctx, std::initializer_list<LayerRef> layers = {},
                      std::string name = "sequential");

  // Appends a layer (named as Keras would: "conv2d", "conv2d_1", ...). Input sets the shape.
  void add(const LayerRef& ref);
};

// TensorFlow's `with tf.device(spec):` for a model: a model compiled while it lives builds
// everything (variables, the training set, every step) on `spec`. Scopes nest.
class DeviceScope {
 public:
  DeviceScope(Model& model, const std::string& spec) : model_(model) {
    DeviceSpec::parse(spec);  // INVALID_ARGUMENT now for a malformed spec
    model_.push_device(spec);
  }
  ~DeviceScope() { model_.pop_device(); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  Model& model_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_MODEL_HPP_
