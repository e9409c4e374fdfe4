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
// Not yet for several inputs or outputs: save_onnx (UNIMPLEMENTED).
// Errors are dlrt::Error (INVALID_ARGUMENT for a model or data that does not fit, naming the
// layer or array and what was expected); nothing aborts.
#ifndef DLRT_NN_MODEL_HPP_
#define DLRT_NN_MODEL_HPP_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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
#include "dlrt/nn/functional_graph.hpp"
#include "dlrt/nn/merging.hpp"
#include "dlrt/nn/layers.hpp"
#include "dlrt/nn/losses.hpp"
#include "dlrt/nn/metrics.hpp"
#include "dlrt/nn/optimizers.hpp"
#include "dlrt/nn/progress.hpp"
#include "dlrt/nn/replicated.hpp"
#include "dlrt/nn/session.hpp"

namespace dlrt::nn {

class Model;

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
// The tape of the custom step being traced on this thread (train_step.hpp), which builds a
// model called on graph Values into the step's graph; null outside a step's function.
class ModelCaller {
 public:
  virtual std::vector<Value> call_model(Model& model, const std::vector<Value>& inputs,
                                        bool training) = 0;

 protected:
  ~ModelCaller() = default;
};
inline thread_local ModelCaller* active_tape = nullptr;
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
  // BatchNormalization reads runs as one conv with the normalisation folded into its
  // weights (w * scale, b * scale + shift, from the variables on every run), as TensorFlow's
  // and onnxruntime's graph optimisers fold it. Training steps never fold. false: as built.
  bool fold_batch_norm = true;
  // A BatchNormalization whose output only a ReLU reads (ReLU(), Activation("relu")) builds
  // its op with activation relu and the ReLU passes the value on: one pass over the
  // activations fewer each way (batch_norm_relu_grad rebuilds the mask from x), in training
  // and inference alike. false: as built.
  bool fuse_batch_norm_relu = true;
  // A residual block's tail, ReLU(Add([BatchNormalization(x), shortcut])), where the
  // BatchNormalization's output is read only by that Add (of two inputs) and the Add's only by
  // that ReLU: the training step builds it as one op, batch_norm_add_relu_train, whose
  // backward op also gives the shortcut's gradient (four passes over the activations instead
  // of eight or nine forward, one fewer backward). Trainable layers in the training step only
  // (evaluate and predict build the layers as they are, or fold); not under a mixed-precision
  // policy. false: as built.
  bool fuse_batch_norm_add_relu = true;
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
        std::string name = "functional")
      : Model(ctx, std::vector<SymbolicTensor>{input}, std::vector<SymbolicTensor>{output},
              std::move(name)) {}
  Model(const Context& ctx, const std::vector<SymbolicTensor>& inputs,
        const std::vector<SymbolicTensor>& outputs, std::string name = "functional")
      : ctx_(ctx), name_(std::move(name)) {
    graph_ = detail::trace_graph(inputs, outputs, name_);
    layers_ = graph_.layers;
  }
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  virtual ~Model() { detach_holder(); }
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
  void set_trainable(bool trainable) {
    for (const auto& l : layers_) l->set_trainable(trainable);
  }
  // The layer named `name` (Keras' get_layer); NOT_FOUND naming the model's layers otherwise.
  Layer& get_layer(const std::string& name) const {
    std::string names;
    for (const auto& l : layers_) {
      if (l->name() == name) return *l;
      names += (names.empty() ? "" : ", ") + l->name();
    }
    throw Error(DLRT_NOT_FOUND, name_ + ": no layer named '" + name + "' (layers: " + names + ")");
  }
  // The weights the gradients of a custom step may update (nn::Tape::minimize): every
  // trainable parameter of a layer whose trainable flag is set, in plan order. Builds the
  // plan (without optimizer) when the model has an Input and was not compiled.
  std::vector<Variable> trainable_variables() {
    ensure_plan("trainable_variables");
    std::vector<Variable> out;
    for (size_t l = 0; l < plan_->layers.size(); ++l)
      for (size_t i : plan_->layer_state[l])
        if (plan_->state[i].weight && plan_->layers[l]->trainable())
          out.push_back({this, plan_->state[i].name});
    return out;
  }

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
  Value operator()(const Value& input, bool training = true) {
    std::vector<Value> out = (*this)(std::vector<Value>{input}, training);
    if (out.size() != 1)
      throw Error(DLRT_INVALID_ARGUMENT, name_ + " has " + std::to_string(out.size()) +
                                             " outputs; call it with a vector of inputs to get "
                                             "them all");
    return out[0];
  }

 private:
  void compile_plan(const Optimizer* optimizer, const Loss* loss,
                    const std::vector<std::string>& metrics, const CompileConfig& config) {
    if (layers_.empty()) throw Error(DLRT_FAILED_PRECONDITION, "compile: the model has no layers");
    detach_holder();
    optimizer_.reset();
    loss_.reset();
    if (optimizer) optimizer_ = optimizer->clone();
    if (loss) loss_ = loss->clone();
    metrics_.clear();
    for (const std::string& m : metrics) {
      metrics_.push_back(metric_named(m));
      if (metrics_.back()->needs_sparse_labels() && !loss_->sparse_labels())
        throw Error(DLRT_INVALID_ARGUMENT, "compile: metric '" + m +
                                               "' needs class labels; the "
                                               "loss " +
                                               loss_->name() + " takes other targets");
    }
    if (!config.loss_weights.empty()) {
      if (config.loss_weights.size() != num_outputs())
        throw Error(DLRT_INVALID_ARGUMENT,
                    "compile: loss_weights has " + std::to_string(config.loss_weights.size()) +
                        " weight" + (config.loss_weights.size() == 1 ? "" : "s") + "; " + name_ +
                        " has " + std::to_string(num_outputs()) + " output" +
                        (num_outputs() == 1 ? "" : "s") + " (" + joined(output_names()) +
                        "): give one weight per output, in that order");
      for (size_t k = 0; k < config.loss_weights.size(); ++k)
        if (!std::isfinite(config.loss_weights[k]))
          throw Error(DLRT_INVALID_ARGUMENT,
                      "compile: loss_weights[" + std::to_string(k) + "] is not finite");
    }
    config_ = config;
    scopes_at_compile_ = scopes_;
    if (!config.device.empty() && config.device != "auto")
      scopes_at_compile_.push_back(config.device);
    for (const std::string& s : scopes_at_compile_) DeviceSpec::parse(s);  // refuse bad specs now
    strategy_.reset();
    strategy_devices_.clear();
    if (const DistributionStrategy* st = detail::current_strategy) {
      strategy_ = st->impl();
      strategy_devices_ = st->devices();
    }
    plan_.reset();
    session_.reset();
    replicas_.reset();
    if (!sequential_) make_plan(graph_.inputs);
    else if (input_) make_plan({*input_});
  }

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
  // statistics) as an ONNX model at `path` (opset 17; dlrt_graph_export_onnx): input "input"
  // of `input_dtype` and the model's input shape, output "output", the batch dim the symbol
  // "N"; the weights are the current ones. onnxruntime and dlrt::InferenceSession run it
  // (docs/onnx.md). Error UNIMPLEMENTED names a layer's op that has no ONNX form yet.
  void save_onnx(const std::string& path, dlrt_dtype input_dtype = DLRT_F32);

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
  size_t num_local_replicas() { return strategy_ ? replicas().size() : 1; }
  // Overwrites the variables named in `values` (shapes must match; unknown names are refused).
  void set_state(const std::vector<NamedValue>& values);
  // Checkpoints (safetensors; nn/checkpoint.hpp): every state variable, and epoch, step and
  // seed in __metadata__. load_weights restores them all and epoch().
  void save_weights(const std::string& path);
  void load_weights(const std::string& path);

  int64_t epoch() const { return epoch_; }  // epochs completed (restored by load_weights)
  uint64_t seed() const { return config_.seed; }
  const std::string& name() const { return name_; }
  // Every layer once (a shared layer too), in the order they are called; no Input.
  const std::vector<std::shared_ptr<Layer>>& layers() const { return layers_; }
  bool is_sequential() const { return sequential_; }
  size_t num_inputs() const { return sequential_ ? 1 : graph_.inputs.size(); }
  size_t num_outputs() const { return sequential_ ? 1 : graph_.outputs.size(); }
  // Keras' model.input_names / output_names: the Input layers' names ("input", "input_1", ...)
  // and the names of the layers making the outputs (an output made twice by one shared layer,
  // or a repeated output, gets "_<k>" after the first), in order. They name arrays in errors
  // and the per-output entries of the logs.
  std::vector<std::string> input_names() const {
    return sequential_ || graph_.input_names.empty() ? std::vector<std::string>{"input"}
                                                     : graph_.input_names;
  }
  std::vector<std::string> output_names() const;
  // The training step's executable (placement dumps, profiling); fit() must have run.
  // Under a strategy: replica 0's executable of gradients.
  Executable& train_executable() {
    if (replicas_ && replicas_->primary().has_split())
      return replicas_->primary().grads_executable();
    if (!session_ || !session_->has_train())
      throw Error(DLRT_FAILED_PRECONDITION, "train_executable: fit() has not built a step yet");
    return session_->train_executable();
  }
  bool has_plan() const { return plan_ != nullptr; }
  bool has_optimizer() const { return optimizer_ != nullptr; }
  const detail::Plan& plan() const {
    if (!plan_)
      throw Error(DLRT_FAILED_PRECONDITION, name_ +
                                                ": not built: compile() it with an "
                                                "Input layer first, or fit() it");
    return *plan_;
  }

  // Used by nn::DeviceScope.
  void push_device(const std::string& spec) { scopes_.push_back(spec); }
  void pop_device() {
    if (!scopes_.empty()) scopes_.pop_back();
  }

 protected:
  // For Sequential: no graph yet; it is the chain of layers_ once the input shape is known.
  Model(const Context& ctx, std::string name)
      : ctx_(ctx), name_(std::move(name)), sequential_(true) {}

 private:
  // Fixes the plan for these input shapes: a Sequential's chain is made here, a functional
  // model's graph was made by its constructor.
  void make_plan(const std::vector<Shape>& inputs);
  void sequential_summary(std::ostream& out) const;
  void functional_summary(std::ostream& out) const;
  // What takes only models of one input and one output (save_onnx).
  void check_plain_inputs_outputs(const std::string& who) const {
    if (num_inputs() != 1 || num_outputs() != 1)
      throw Error(DLRT_UNIMPLEMENTED,
                  who + ": " + name_ + " has " + std::to_string(num_inputs()) + " input(s) and " +
                      std::to_string(num_outputs()) + " output(s); " + who +
                      " takes models of one input and one output for now (fit, evaluate, "
                      "predict, summary, state and checkpoints take any)");
  }
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
  std::vector<std::string> log_names() const {
    const std::vector<std::string> outs = output_names();
    const bool several = outs.size() > 1;
    std::vector<std::string> names = {"loss"};
    if (several)
      for (const std::string& o : outs) names.push_back(o + "_loss");
    for (const std::string& o : outs)
      for (const auto& m : metrics_) names.push_back((several ? o + "_" : "") + m->name());
    return names;
  }
  // Logs from a step's results: the losses divided by `loss_rows`, the metric counts by
  // `count_rows`.
  Logs logs_of(const std::vector<double>& results, double loss_rows, double count_rows) const {
    const std::vector<std::string> names = log_names();
    const size_t losses = plan_->loss_results();
    Logs logs;
    for (size_t k = 0; k < results.size(); ++k)
      logs.push_back({names.at(k), results[k] / (k < losses ? loss_rows : count_rows)});
    return logs;
  }
  // This model as a Sequential, or null (callbacks' Sequential& hooks; model_impl.hpp).
  Sequential* as_sequential();
  // Evaluation, prediction and state go through this one (replica 0 under a strategy).
  detail::Session& session() {
    reclaim();
    if (strategy_) return replicas().primary();
    if (!session_) session_ = std::make_unique<detail::Session>(ctx_, plan_);
    return *session_;
  }
  detail::ReplicaSet& replicas() {
    reclaim();
    if (!replicas_)
      replicas_ = std::make_unique<detail::ReplicaSet>(ctx_, plan_, strategy_, strategy_devices_);
    return *replicas_;
  }
  // Every session holding the model's state: one, or one per replica.
  std::vector<detail::Session*> all_sessions() {
    if (!strategy_) return {&session()};
    std::vector<detail::Session*> out;
    for (size_t r = 0; r < replicas().size(); ++r) out.push_back(&replicas_->replica(r));
    return out;
  }
  void fit_prepare(const detail::ArrayRefs& xs, const detail::ArrayRefs& ys, int64_t batch);
  // Writes the optimizer's rate for the step after `steps_done` into every session's
  // "optimizer/learning_rate" when it differs from `*written` (the value last written, NaN
  // when none), and remembers it there.
  void set_learning_rate(int64_t steps_done, float* written) {
    const float lr = static_cast<float>(optimizer_->learning_rate().at(steps_done));
    if (lr == *written) return;
    for (detail::Session* s : all_sessions())
      s->graph().write_variable(s->vars()[plan_->learning_rate], std::vector<float>{lr});
    *written = lr;
  }
  void set_state_of(detail::Session& s, const std::vector<NamedValue>& values);
  Executable& step_executable() {
    return strategy_ ? replicas_->primary().grads_executable() : session_->train_executable();
  }
  // x (named `xn` in errors) for a model input whose layers take ids (Embedding): i32 or i64,
  // every id in [0, ids); checked here on the host, so a bad id is the same INVALID_ARGUMENT on
  // every device.
  static void check_ids(const Array& x, const std::string& xn, int64_t ids,
                        const std::string& who) {
    if (x.dtype() != DLRT_I32 && x.dtype() != DLRT_I64)
      throw Error(DLRT_INVALID_ARGUMENT, who + ": " + xn + " is " + dtype_name(x.dtype()) +
                                             "; the model starts with an Embedding, which takes "
                                             "i32 or i64 ids");
    const size_t n = x.bytes().size() / dtype_size(x.dtype());
    const size_t per_sample = n / static_cast<size_t>(x.rows());
    for (size_t i = 0; i < n; ++i) {
      int64_t id;
      if (x.dtype() == DLRT_I32) {
        int32_t v;
        std::memcpy(&v, x.data() + i * sizeof v, sizeof v);
        id = v;
      } else {
        std::memcpy(&id, x.data() + i * sizeof id, sizeof id);
      }
      if (id < 0 || id >= ids)
        throw Error(DLRT_INVALID_ARGUMENT,
                    who + ": " + xn + " holds id " + std::to_string(id) + " (sample " +
                        std::to_string(i / per_sample) + ", element " +
                        std::to_string(i % per_sample) + "), outside [0, " + std::to_string(ids) +
                        "): the Embedding's input_dim is " + std::to_string(ids));
    }
  }
  // "x" when a model takes one array of the kind, else "x[i]": how errors name an array.
  static std::string array_name(const char* kind, size_t i, size_t count) {
    return count == 1 ? std::string(kind) : std::string(kind) + "[" + std::to_string(i) + "]";
  }
  static std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  }
  // The data of fit/evaluate (ys given) or predict (ys null): one x per model input, one y per
  // output, all with the same number of samples; each x of its input's sample shape and dtype
  // (u8 images or f32 features; i32/i64 ids for an input read by Embeddings), each y checked by
  // the loss against its output's shape. INVALID_ARGUMENT naming the array otherwise.
  void check_data(const detail::ArrayRefs& xs, const detail::ArrayRefs* ys,
                  const std::string& who) {
    const size_t ni = num_inputs(), no = num_outputs();
    if (xs.size() != ni)
      throw Error(DLRT_INVALID_ARGUMENT, who + ": " + std::to_string(xs.size()) + " x array" +
                                             (xs.size() == 1 ? "" : "s") + " given; " + name_ +
                                             " has " + std::to_string(ni) + " input" +
                                             (ni == 1 ? "" : "s") + " (" + joined(input_names()) +
                                             "): give one array per input, in that order");
    if (ys != nullptr && ys->size() != no)
      throw Error(DLRT_INVALID_ARGUMENT, who + ": " + std::to_string(ys->size()) + " y array" +
                                             (ys->size() == 1 ? "" : "s") + " given; " + name_ +
                                             " has " + std::to_string(no) + " output" +
                                             (no == 1 ? "" : "s") + " (" + joined(output_names()) +
                                             "): give one array of targets per output, in that "
                                             "order");
    for (size_t i = 0; i < ni; ++i)
      if (xs[i]->empty())
        throw Error(DLRT_INVALID_ARGUMENT, who + ": " + array_name("x", i, ni) + " is empty");
    if (ys != nullptr) require_loss(who);            // fit, evaluate; predict needs no compile()
    if (!plan_) make_plan({xs[0]->sample_shape()});  // a Sequential without Input: one input
    const std::vector<std::string> inames = input_names();
    for (size_t i = 0; i < ni; ++i) {
      const Array& x = *xs[i];
      const std::string xn = array_name("x", i, ni);
      const std::string takes =
          ni == 1 ? "the model takes "
                  : "the model's input " + std::to_string(i) + " (" + inames.at(i) + ") takes ";
      if (x.sample_shape() != plan_->inputs.at(i))
        throw Error(DLRT_INVALID_ARGUMENT, who + ": " + xn + " has samples of shape " +
                                               shape_string(x.sample_shape()) + "; " + takes +
                                               shape_string(plan_->inputs[i]));
      if (i > 0 && x.rows() != xs[0]->rows())
        throw Error(DLRT_INVALID_ARGUMENT, who + ": " + xn + " has " + std::to_string(x.rows()) +
                                               " samples but x[0] has " +
                                               std::to_string(xs[0]->rows()) +
                                               "; every array needs one row per sample");
      if (const int64_t ids = detail::model_input_ids(*plan_, i); ids > 0) {
        check_ids(x, xn, ids, who);  // Embedding first: i32/i64 ids, each in [0, ids)
      } else if (x.dtype() != DLRT_U8 && x.dtype() != DLRT_F32) {
        throw Error(DLRT_INVALID_ARGUMENT, who + ": " + xn + " is " + dtype_name(x.dtype()) +
                                               "; expected u8 (images, scaled by 1/255) or f32");
      }
    }
    if (ys == nullptr) return;
    const std::vector<std::string> onames = output_names();
    for (size_t k = 0; k < no; ++k) {
      const Array& y = *(*ys)[k];
      if (no == 1) {  // the messages of a model of one output, as they always were
        if (y.rows() != xs[0]->rows())
          throw Error(DLRT_INVALID_ARGUMENT, who + ": x has " + std::to_string(xs[0]->rows()) +
                                                 " samples but y has " + std::to_string(y.rows()));
        plan_->loss->check_targets(y, output_shapes_[0]);
        continue;
      }
      const std::string yn = array_name("y", k, no);
      if (y.empty()) throw Error(DLRT_INVALID_ARGUMENT, who + ": " + yn + " is empty");
      if (y.rows() != xs[0]->rows())
        throw Error(DLRT_INVALID_ARGUMENT, who + ": " + yn + " has " + std::to_string(y.rows()) +
                                               " samples but x[0] has " +
                                               std::to_string(xs[0]->rows()) +
                                               "; every array needs one row per sample");
      try {
        plan_->loss->check_targets(y, output_shapes_[k]);
      } catch (const Error& e) {
        throw Error(e.code(), who + ": " + yn + " (targets of output " + std::to_string(k) + ", " +
                                  onames.at(k) + "): " + e.message());
      }
    }
  }

  // A custom step (nn::TrainStep) that holds the newest values of this model's weights: it
  // was given them to train, and gives them back before anything here reads or writes the
  // model's own sessions (the "holder" hand-over of train_step.hpp).
  void reclaim() {
    if (detail::StateHolder* h = holder_) {
      holder_ = nullptr;
      h->give_back(*this);
    }
  }
  // compile() and the destructor: the holder keeps its copy but no longer owes it here.
  void detach_holder() {
    if (detail::StateHolder* h = holder_) {
      holder_ = nullptr;
      h->detach(*this);
    }
  }
  // Builds the plan without an optimizer when the model can be built and is not: a functional
  // model, or a Sequential with an Input (predict and custom steps need no compile()).
  void ensure_plan(const std::string& who) {
    if (plan_) return;
    if (sequential_ && !input_)
      throw Error(DLRT_FAILED_PRECONDITION, who + ": " + name_ +
                                                " is not built: give it an Input layer, or "
                                                "compile() and fit() it first");
    compile_plan(nullptr, nullptr, {}, config_);
  }
  void require_loss(const std::string& who) const {
    if (!optimizer_ || !loss_)
      throw Error(DLRT_FAILED_PRECONDITION, who + ": " + name_ +
                                                " has no optimizer and loss; "
                                                "compile(optimizer, loss) it first");
  }
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
  detail::FunctionalGraph graph_;  // a functional model's; a Sequential's once planned
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
};

// keras.Sequential: a Model whose graph is its layers one after another. Layers are named as
// Keras would ("conv2d", "conv2d_1", ...) when added; an Input first sets the input shape,
// else the first fit() does.
class Sequential : public Model {
 public:
  explicit Sequential(const Context& ctx, std::initializer_list<LayerRef> layers = {},
                      std::string name = "sequential")
      : Model(ctx, std::move(name)) {
    for (const LayerRef& l : layers) add(l);
  }

  // Appends a layer (named as Keras would: "conv2d", "conv2d_1", ...). Input sets the shape.
  void add(const LayerRef& ref) {
    std::shared_ptr<Layer> layer = ref.get();
    if (has_plan()) throw Error(DLRT_FAILED_PRECONDITION, "Sequential::add: the model is compiled");
    if (layer->is_input()) {
      if (!layers_.empty() || input_)
        throw Error(DLRT_INVALID_ARGUMENT, "Sequential::add: Input must come first, once");
      input_ = layer->output_shape(Shape{});
      return;
    }
    const int n = counts_[layer->base_name()]++;
    layer->set_name(n == 0 ? layer->base_name() : layer->base_name() + "_" + std::to_string(n));
    layers_.push_back(std::move(layer));
  }
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

#include "dlrt/nn/model_impl.hpp"  // IWYU pragma: export

#endif  // DLRT_NN_MODEL_HPP_
