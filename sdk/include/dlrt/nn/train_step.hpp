// dlrt/nn/train_step.hpp: custom training steps — what TensorFlow users write with
// tf.GradientTape and a tf.function: their own forward pass, several models, several losses
// and optimizers, compiled once and run many times like fit's step.
//
//   nn::Adam d_opt(2e-4, 0.5), g_opt(2e-4, 0.5);
//   nn::TrainStep step(ctx, [&](nn::Tape& t) -> nn::StepMetrics {
//     nn::Value fake = gen(t.input("z"));                    // models called on graph Values
//     nn::Value real_logits = disc(t.input("x")), fake_logits = disc(fake);
//     nn::Value d_loss = t.op("add", {t.loss(bce, t.ones_like(real_logits), real_logits),
//                                     t.loss(bce, t.zeros_like(fake_logits), fake_logits)});
//     nn::Value g_loss = t.loss(bce, t.ones_like(fake_logits), fake_logits);
//     t.minimize(d_loss, d_opt, disc.trainable_variables());
//     t.minimize(g_loss, g_opt, gen.trainable_variables());
//     return {{"d_loss", d_loss}, {"g_loss", g_loss}};
//   });
//   nn::Logs logs = step.run({{"x", x_batch}, {"z", z_batch}});   // {"d_loss", ...}, ...
//
// How it runs. The function is traced (called once, building ops into the step's own graph)
// at the first run, with one placeholder per feed of that run's names, dtypes and shapes, as
// tf.function traces on its first call; later runs with the same feed types run the compiled
// executable and only copy the feeds in. A run whose feeds differ in name, dtype or shape
// traces again into a new graph and carries every variable's value over (so feed one batch
// size: drop or pad a last partial batch, as tf.data's drop_remainder, or pay a compile).
//
// Every update of one run happens in that run: a dlrt graph holds one assign per variable and
// compiles all of them into one executable (session.hpp), so the step is one graph with one
// minimize per optimizer and each variable updated by at most one of them. A GAN's two updates
// are thus made from the same forward pass (as TensorFlow's DCGAN tutorial does with two
// tapes), each optimizer over its own variables.
//
// Variables. The step keeps its own copy of the weights of every model its function calls
// ("<model>/<variable>", "generator/dense/kernel") and of each optimizer's state
// ("<optimizer>/iterations", "<optimizer>/learning_rate", and "<optimizer>/<variable>/m" per
// slot). The copy is lent, not forked: the first run takes each model's current weights, and
// the model gets the step's newest back (Model::set_state) as soon as anything reads or writes
// the model itself — predict, evaluate, fit, state(), save_weights — after which the next run
// takes them again. So `step.run(...)` then `gen.predict(z)` predicts with the trained weights,
// and a step sees load_weights done on a model. Models must outlive the step; compiling a
// model again detaches it (the step then refuses to run: make a new step).
//
// BatchNormalization called with training=true updates its moving statistics in the run;
// when one model is called twice in a step (a discriminator on real and on fake images) the
// last call's statistics are kept.
//
// Random numbers: Dropout and Tape::random_normal draw with the executable's run count, so each
// run draws anew and a step restored from a checkpoint (save/load, which record the run
// count) continues the draws of the uninterrupted run.
//
// Errors are dlrt::Error naming the value: minimize of a non-scalar loss (the loss's type), of
// a variable the loss does not depend on (TensorFlow's "Gradients do not exist" warning made an
// error, with the variable's name), an optimizer given no variables, a variable of a model the
// step never calls, a feed the function never reads, or an input it reads that the run does
// not feed.
//
// Not yet: running a step under a MirroredStrategy (the step runs on one device; models
// compiled in a strategy scope lend and take back their replica 0 state), and a C API.
#ifndef DLRT_NN_TRAIN_STEP_HPP_
#define DLRT_NN_TRAIN_STEP_HPP_

#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/data.hpp"
#include "dlrt/nn/losses.hpp"
#include "dlrt/nn/model.hpp"
#include "dlrt/nn/optimizers.hpp"
#include "dlrt/nn/progress.hpp"
#include "dlrt/nn/session.hpp"

namespace dlrt::nn {

// One named input of a run: the placeholder `name` of the step gets `array` (the whole array,
// batch dim first). The array must outlive the run() call only.
struct Feed {
  Feed(std::string feed_name, const Array& feed_array)
      : name(std::move(feed_name)), array(&feed_array) {}
  std::string name;
  const Array* array;
};

struct StepOptions {
  // A device spec every op and variable of the step requests ("" = each model's own scopes,
  // else placement per op), in the grammar of dlrt device specs; "auto" compiles with dlrt's
  // auto device (one device for the whole step, as CompileConfig::device "auto").
  std::string device;
  uint64_t seed = 0;  // Tape::random_normal's draws derive from it
  bool log_device_placement = false;
  bool use_capture = true;  // as CompileConfig::use_capture
};

class Tape;
// The named values a step function returns: f32 scalars are metrics, which run() returns as
// numbers; any other value (a batch of images, logits) is fetched too and read with output().
using StepMetrics = std::vector<std::pair<std::string, Value>>;
using StepFunction = std::function<StepMetrics(Tape&)>;

class TrainStep;

// What a step function builds with: its inputs, ops, losses and the updates (minimize). Only
// valid during the call of the function (while the step is traced).
class Tape : private detail::ModelCaller {
 public:
  Graph& graph() { return *graph_; }
  // The placeholder fed by run()'s feed `name` (its dtype and shape). INVALID_ARGUMENT naming
  // it and the feeds when the run has no such feed.
  Value input(const std::string& name);
  // Any op of docs/ops.md: the first output of `op` on `inputs`.
  Value op(const std::string& op_name, const std::vector<Value>& inputs, const OpAttrs& attrs = {}) {
    return graph_->op1(op_name, inputs, attrs);
  }
  Value constant(float v) { return graph_->constant<float>("", {}, {v}); }
  Value mean(Value x) { return op("reduce_mean", {x}); }
  Value sum(Value x) { return op("reduce_sum", {x}); }
  Value stop_gradient(Value x) { return op("stop_gradient", {x}); }
  Value ones_like(Value x) { return fill_like(x, 1.0); }
  Value zeros_like(Value x) { return fill_like(x, 0.0); }
  // N(mean 0, stddev) of shape `dims`, drawn anew every run (the reparameterisation trick).
  Value random_normal(const std::vector<int64_t>& dims, double stddev = 1.0);
  // `loss` as fit computes it: the mean over the batch (dim 0) of loss.per_sample(y_pred,
  // y_true), y_true prepared as the loss does (labels to i32). Bit for bit fit's loss.
  Value loss(const Loss& loss, Value y_true, Value y_pred) {
    Graph& g = *graph_;
    Value per = loss.per_sample(g, y_pred, loss.prepare_targets(g, y_true));
    const float rows = static_cast<float>(y_pred.dims().at(0));
    return g.op1("div", {g.op1("reduce_sum", {per}), g.constant<float>("", {}, {rows})});
  }
  // Adds `optimizer`'s update of every variable of `variables` by the gradient of `loss` (a
  // float scalar) to the step; each run applies it. `name` names the optimizer's variables
  // ("optimizer", "optimizer_1", ... by default, in the order of the minimize calls).
  void minimize(Value loss, const Optimizer& optimizer, const std::vector<Variable>& variables,
                const std::string& name = "");
  // The step's copy of a model's variable (to read it in a custom loss, e.g. a penalty).
  Value variable(const Variable& v);

 private:
  friend class TrainStep;
  Tape(TrainStep& step, Graph& graph) : step_(step), graph_(&graph) {}
  std::vector<Value> call_model(Model& model, const std::vector<Value>& inputs,
                                bool training) override;
  Value fill_like(Value x, double v) {
    const std::vector<int64_t> d = x.dims();
    return graph_->op1("fill", {}, {{"shape", d}, {"value", v}, {"dtype", x.dtype()}});
  }

  TrainStep& step_;
  Graph* graph_;
  int random_draws_ = 0;
};

class TrainStep : private detail::StateHolder {
 public:
  TrainStep(const Context& ctx, StepFunction fn, StepOptions options = {})
      : ctx_(ctx), fn_(std::move(fn)), options_(std::move(options)) {
    if (!fn_) throw Error(DLRT_INVALID_ARGUMENT, "TrainStep: the step function is empty");
    if (!options_.device.empty() && options_.device != "auto") DeviceSpec::parse(options_.device);
  }
  ~TrainStep() {
    for (Binding& b : bindings_) {
      if (b.model == nullptr || b.model->holder_ != this) continue;
      try {
        b.model->holder_ = nullptr;
        give_back(*b.model);
      } catch (const std::exception& e) {  // a destructor must not throw: say what was lost
        std::cerr << "dlrt: TrainStep could not give model " << b.model->name()
                  << " its trained weights: " << e.what() << "\n";
      }
    }
  }
  TrainStep(const TrainStep&) = delete;
  TrainStep& operator=(const TrainStep&) = delete;

  // One step: traces on the first run (or when the feeds' types change), then runs the
  // compiled executable on `feeds`. Returns the function's metrics, in its order.
  Logs run(const std::vector<Feed>& feeds);
  // A result of the last run that is not an f32 scalar (a batch of reconstructions, logits),
  // as the function returned it: dtype and dims of its Value. NOT_FOUND naming the results.
  Array output(const std::string& name) {
    std::string names;
    if (trace_ && runs_ > 0)
      for (size_t m = 0; m < trace_->metric_names.size(); ++m) {
        if (trace_->metric_names[m] == name) {
          const Tensor& t = trace_->runner->fetches.at(m);
          std::vector<int64_t> dims = t.dims();
          if (dims.empty()) dims = {1};
          return Array(t.dtype(), dims, t.read<uint8_t>());
        }
        names += (names.empty() ? "" : ", ") + trace_->metric_names[m];
      }
    throw Error(DLRT_NOT_FOUND, "TrainStep::output: no result '" + name + "' of a run" +
                                    (names.empty() ? " (the step has not run)"
                                                   : " (results: " + names + ")"));
  }
  // Runs done (restored by load); random draws and Dropout masks follow it.
  uint64_t runs() const { return runs_; }

  // Every variable of the step (the models' weights as "<model>/<name>", the optimizers'
  // state) to a safetensors file (atomically, as Model::save_weights), and back: load
  // restores all of them and the run count, now when the step has run, else at the next run
  // (after it has taken the models' weights, which the file's then replace). A GAN stopped
  // after a save and resumed from it makes the uninterrupted run's updates.
  void save(const std::string& path);
  void load(const std::string& path);

  // The compiled executable of the last trace (placement, profiling); FAILED_PRECONDITION
  // before the first run.
  Executable& executable() {
    if (!trace_) throw Error(DLRT_FAILED_PRECONDITION, "TrainStep: it has not run yet");
    return trace_->runner->exe;
  }

 private:
  friend class Tape;

  // A model the function calls: its plan and, in the current trace, the step's variables of
  // its layers (indexed as plan->state; invalid for optimizer entries of a compiled model).
  struct Binding {
    Model* model;  // null once the model is recompiled or destroyed (detach)
    std::string prefix;  // "generator/": the step's names of its variables
    std::shared_ptr<const detail::Plan> plan;
    std::vector<Value> vars;  // this trace's; empty when the trace does not call it
    int calls = 0;            // calls in this trace
  };
  struct OptimizerState {
    std::shared_ptr<const Optimizer> optimizer;
    std::string name;
    Value iterations, learning_rate;
    int64_t steps_done = 0;  // host copy of iterations, for the rate schedule
    float written = -1.f;    // the rate last written
  };
  struct Trace {
    std::unique_ptr<Graph> graph;
    std::vector<std::string> feed_names;  // placeholders, in feed order
    std::vector<Value> placeholders;
    std::vector<dlrt_dtype> dtypes;
    std::vector<std::vector<int64_t>> dims;
    std::set<std::string> read;              // the feeds the function read
    std::vector<std::pair<std::string, Value>> variables;  // every step variable, by name
    std::vector<OptimizerState> optimizers;
    std::set<std::string> minimized;  // variables some optimizer updates
    std::map<std::string, std::pair<Value, Value>> state_updates;  // name -> (variable, value)
    std::vector<std::string> metric_names;  // every result, in the function's order
    std::vector<bool> scalar;               // per result: an f32 scalar (a metric of run())
    std::unique_ptr<detail::Runner> runner;
  };

  // ---- the holder hand-over (model.hpp's StateHolder) ----
  void give_back(Model& model) override {
    Binding& b = binding_of(model);
    if (!trace_ || b.vars.empty()) return;
    std::vector<Model::NamedValue> values;
    for (size_t i : layer_state(*b.plan)) {
      const detail::StateVar& s = b.plan->state[i];
      values.push_back({s.name, s.dims, trace_->graph->read_variable<float>(b.vars[i])});
    }
    model.set_state(values);
  }
  void detach(Model& model) override { binding_of(model).model = nullptr; }
  // Takes the weights of every model of this trace that does not lend them to this step now.
  void lend_from_models() {
    for (Binding& b : bindings_) {
      if (b.vars.empty() || b.model == nullptr || b.model->holder_ == this) continue;
      const std::vector<Model::NamedValue> state = b.model->state();  // reclaims from others
      for (size_t i : layer_state(*b.plan))
        trace_->graph->write_variable(b.vars[i], state.at(i).values);
      b.model->holder_ = this;
    }
  }
  Binding& binding_of(Model& model) {
    for (Binding& b : bindings_)
      if (b.model == &model) return b;
    throw Error(DLRT_INTERNAL, "TrainStep: model " + model.name() + " is not bound to it");
  }
  // The plan entries a step holds of a model: its layers' variables (no optimizer state).
  static std::vector<size_t> layer_state(const detail::Plan& p) {
    std::vector<size_t> out;
    for (const auto& ids : p.layer_state) out.insert(out.end(), ids.begin(), ids.end());
    return out;
  }
  Value make_variable(const std::string& name, const Shape& dims, bool trainable, double init) {
    Value v = trace_->graph->variable(name, DLRT_F32, dims, "fill", {{"value", init}}, trainable);
    trace_->variables.push_back({name, v});
    return v;
  }
  void build_trace(const std::vector<Feed>& feeds);
  void write_values(const std::map<std::string, Model::NamedValue>& values, bool complete,
                    const std::string& who);
  static std::map<std::string, Model::NamedValue> read_values(Trace& t) {
    std::map<std::string, Model::NamedValue> out;
    for (const auto& [name, v] : t.variables)
      out[name] = {name, v.dims(), t.graph->read_variable<float>(v)};
    return out;
  }

  const Context& ctx_;
  StepFunction fn_;
  StepOptions options_;
  std::vector<Binding> bindings_;
  std::unique_ptr<Trace> trace_;
  uint64_t runs_ = 0;
  std::map<std::string, Model::NamedValue> pending_;  // load() before the first run
  bool has_pending_ = false;
};

// ---- Tape ----

inline Value Tape::input(const std::string& name) {
  TrainStep::Trace& t = *step_.trace_;
  for (size_t i = 0; i < t.feed_names.size(); ++i)
    if (t.feed_names[i] == name) {
      t.read.insert(name);
      return t.placeholders[i];
    }
  std::string have;
  for (const std::string& n : t.feed_names) have += (have.empty() ? "" : ", ") + n;
  throw Error(DLRT_INVALID_ARGUMENT, "TrainStep: the step reads input '" + name +
                                         "', which the run does not feed (feeds: " +
                                         (have.empty() ? "none" : have) + ")");
}

inline Value Tape::random_normal(const std::vector<int64_t>& dims, double stddev) {
  const uint64_t seed =
      derive_seed(step_.options_.seed, "tape/random_normal/" + std::to_string(random_draws_++));
  return graph_->op1("random_normal", {},
                     {{"shape", dims}, {"stddev", stddev}, {"seed", static_cast<int64_t>(seed)}});
}

inline std::vector<Value> Tape::call_model(Model& model, const std::vector<Value>& inputs,
                                           bool training) {
  model.ensure_plan("TrainStep");
  TrainStep::Binding* b = nullptr;
  for (TrainStep::Binding& x : step_.bindings_)
    if (x.model == &model) b = &x;
  if (b == nullptr) {
    // A new model: named after it, made unique among the step's models.
    std::string prefix = model.name();
    for (int k = 1;; ++k) {
      bool taken = false;
      for (const TrainStep::Binding& x : step_.bindings_) taken |= x.prefix == prefix + "/";
      if (!taken) break;
      prefix = model.name() + "_" + std::to_string(k);
    }
    model.reclaim();  // another step's weights come home before this one binds
    step_.bindings_.push_back({&model, prefix + "/", model.plan_, {}, 0});
    b = &step_.bindings_.back();
  }
  if (b->plan != model.plan_)
    throw Error(DLRT_FAILED_PRECONDITION, "TrainStep: model " + model.name() +
                                              " was compiled again after the step first ran; "
                                              "make a new step for it");
  const detail::Plan& plan = *b->plan;
  if (inputs.size() != plan.inputs.size())
    throw Error(DLRT_INVALID_ARGUMENT, model.name() + ": called on " +
                                           std::to_string(inputs.size()) + " inputs; it takes " +
                                           std::to_string(plan.inputs.size()));
  const bool ids = detail::model_input_ids(plan) > 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<int64_t> d = inputs[i].dims();
    const Shape sample(d.begin() + (d.empty() ? 0 : 1), d.end());
    const dlrt_dtype dt = inputs[i].dtype();
    const bool dtype_ok = ids ? (dt == DLRT_I32 || dt == DLRT_I64) : dt == DLRT_F32;
    if (d.empty() || sample != plan.inputs[i] || !dtype_ok)
      throw Error(DLRT_INVALID_ARGUMENT,
                  model.name() + ": input " + std::to_string(i) + " is " + dtype_name(dt) +
                      dims_string(d) + "; the model takes " + (ids ? "i32|i64" : "f32") +
                      " (B, " + shape_string(plan.inputs[i]).substr(1));
  }
  Graph& g = *graph_;
  detail::Scopes scopes(g, plan.device_scopes);
  if (b->vars.empty()) {
    b->vars.assign(plan.state.size(), Value());
    for (size_t i : TrainStep::layer_state(plan)) {
      const detail::StateVar& s = plan.state[i];
      b->vars[i] = step_.make_variable(b->prefix + s.name, s.dims, s.trainable, 0.0);
    }
  }
  // Call 0 draws as fit's step does (the model's seed, scope "<model>/"); later calls of the
  // same model get their own seed and scope.
  const int call = b->calls++;
  const uint64_t seed = call == 0 ? plan.seed : derive_seed(plan.seed, "step_call/" + std::to_string(call));
  std::vector<StateUpdate> updates;
  CallContext c{g, training, seed,
                b->prefix + (call == 0 ? "" : "call_" + std::to_string(call) + "/"),
                training ? &updates : nullptr};
  std::vector<Value> out = detail::run_plan(plan, c, inputs, b->vars);
  for (const StateUpdate& u : updates) {
    std::string name;
    for (size_t i = 0; i < b->vars.size() && name.empty(); ++i)
      if (b->vars[i] == u.variable) name = b->prefix + plan.state[i].name;
    step_.trace_->state_updates[name] = {u.variable, u.value};  // the last call's are kept
  }
  return out;
}

inline Value Tape::variable(const Variable& v) {
  for (TrainStep::Binding& b : step_.bindings_) {
    if (b.model != v.model || v.model == nullptr) continue;
    if (b.vars.empty()) break;
    for (size_t i = 0; i < b.plan->state.size(); ++i)
      if (b.plan->state[i].name == v.name && b.vars[i]) return b.vars[i];
    throw Error(DLRT_INVALID_ARGUMENT, "TrainStep: '" + v.name + "' is not a variable of model " +
                                           v.model->name());
  }
  throw Error(DLRT_INVALID_ARGUMENT,
              "TrainStep: variable '" + v.name + "' of model " +
                  (v.model ? v.model->name() : std::string("(none)")) +
                  " is not in this step: the step function must call the model first");
}

inline void Tape::minimize(Value loss, const Optimizer& optimizer,
                           const std::vector<Variable>& variables, const std::string& name) {
  TrainStep::Trace& t = *step_.trace_;
  const std::vector<int64_t> d = loss.dims();
  if (!d.empty() || loss.dtype() != DLRT_F32)
    throw Error(DLRT_INVALID_ARGUMENT, "minimize: the loss is " + dtype_name(loss.dtype()) +
                                           dims_string(d) +
                                           "; minimize takes an f32 scalar: reduce it first "
                                           "(Tape::mean, Tape::sum, Tape::loss)");
  const std::string opt_name =
      !name.empty() ? name
                    : (t.optimizers.empty() ? "optimizer"
                                            : "optimizer_" + std::to_string(t.optimizers.size()));
  if (variables.empty())
    throw Error(DLRT_INVALID_ARGUMENT, "minimize: optimizer " + optimizer.name() + " ('" +
                                           opt_name +
                                           "') was given no variables; pass the model's "
                                           "trainable_variables()");
  for (const TrainStep::OptimizerState& o : t.optimizers)
    if (o.name == opt_name)
      throw Error(DLRT_INVALID_ARGUMENT, "minimize: an optimizer named '" + opt_name +
                                             "' is already in the step; name each once");
  std::vector<Value> params;
  std::vector<std::string> names;
  for (const Variable& v : variables) {
    Value p = variable(v);
    std::string full;
    for (const TrainStep::Binding& b : step_.bindings_) {
      if (b.model != v.model) continue;
      full = b.prefix + v.name;
      for (const detail::StateVar& s : b.plan->state)
        if (s.name == v.name && !s.weight)
          throw Error(DLRT_INVALID_ARGUMENT, "minimize: '" + full +
                                                 "' is not a trainable weight (its layer "
                                                 "updates it itself)");
    }
    if (!step_.trace_->graph->depends_on(loss, p))
      throw Error(DLRT_INVALID_ARGUMENT,
                  "minimize: the loss does not depend on variable '" + full +
                      "' (gradients do not exist for it): leave it out of the optimizer's "
                      "variables, or compute the loss from the model it belongs to");
    if (!t.minimized.insert(full).second)
      throw Error(DLRT_INVALID_ARGUMENT, "minimize: variable '" + full +
                                             "' is already updated by another optimizer of "
                                             "the step; a step updates each variable once");
    params.push_back(p);
    names.push_back(full);
  }
  TrainStep::OptimizerState o;
  o.optimizer = optimizer.clone();
  o.name = opt_name;
  o.learning_rate = step_.make_variable(opt_name + "/learning_rate", {}, false,
                                        optimizer.learning_rate().at(0));
  o.iterations = step_.make_variable(opt_name + "/iterations", {}, false, 0.0);
  std::vector<std::vector<Value>> slots;
  for (size_t k = 0; k < params.size(); ++k) {
    slots.emplace_back();
    for (const std::string& slot : optimizer.slot_names())
      slots.back().push_back(
          step_.make_variable(opt_name + "/" + names[k] + "/" + slot, params[k].dims(), false, 0.0));
  }
  Graph& g = *graph_;
  Value step = g.op1("add", {o.iterations, g.constant<float>("", {}, {1.f})});
  g.assign(o.iterations, step);
  o.optimizer->apply_all(g, params, g.gradients(loss, params), slots, step, o.learning_rate);
  t.optimizers.push_back(std::move(o));
}

// ---- TrainStep ----

inline void TrainStep::build_trace(const std::vector<Feed>& feeds) {
  for (const Binding& b : bindings_)
    if (b.model == nullptr)
      throw Error(DLRT_FAILED_PRECONDITION,
                  "TrainStep: model " + b.prefix.substr(0, b.prefix.size() - 1) +
                      " was compiled again or destroyed since the step used it; make a new step");
  auto t = std::make_unique<Trace>();
  t->graph = std::make_unique<Graph>(ctx_);
  Graph& g = *t->graph;
  std::unique_ptr<dlrt::DeviceScope> scope;
  if (!options_.device.empty() && options_.device != "auto")
    scope = std::make_unique<dlrt::DeviceScope>(g, options_.device);
  for (const Feed& f : feeds) {
    for (const std::string& n : t->feed_names)
      if (n == f.name) throw Error(DLRT_INVALID_ARGUMENT, "TrainStep: feed '" + n + "' is given twice");
    t->feed_names.push_back(f.name);
    t->dtypes.push_back(f.array->dtype());
    t->dims.push_back(f.array->dims());
    t->placeholders.push_back(g.placeholder(f.name, f.array->dtype(), f.array->dims()));
  }
  // The new trace becomes current while the function runs (the tape builds into it); on any
  // error the old one, and the models' variables in it, come back: the step stays as it was.
  std::unique_ptr<Trace> old = std::move(trace_);
  trace_ = std::move(t);
  std::vector<std::pair<std::vector<Value>, int>> old_vars;
  for (Binding& b : bindings_) {
    old_vars.push_back({std::move(b.vars), b.calls});
    b.vars.clear();
    b.calls = 0;
  }
  try {
    Tape tape(*this, g);
    StepMetrics metrics;
    {
      detail::ModelCaller* outer = detail::active_tape;
      detail::active_tape = &tape;
      struct Restore {
        detail::ModelCaller* outer;
        ~Restore() { detail::active_tape = outer; }
      } restore{outer};
      metrics = fn_(tape);
    }
    Trace& tr = *trace_;
    for (const std::string& n : tr.feed_names)
      if (!tr.read.count(n))
        throw Error(DLRT_INVALID_ARGUMENT,
                    "TrainStep: feed '" + n + "' is not read by the step function (Tape::input)");
    for (const auto& [name, u] : tr.state_updates) g.assign(u.first, u.second);
    std::vector<Value> fetches;
    for (const auto& [name, v] : metrics) {
      if (!v) throw Error(DLRT_INVALID_ARGUMENT, "TrainStep: result '" + name + "' has no value");
      for (const std::string& n : tr.metric_names)
        if (n == name)
          throw Error(DLRT_INVALID_ARGUMENT, "TrainStep: result '" + name + "' is returned twice");
      tr.metric_names.push_back(name);
      tr.scalar.push_back(v.dims().empty() && v.dtype() == DLRT_F32);
      fetches.push_back(v);
    }
    if (fetches.empty() && tr.optimizers.empty() && tr.state_updates.empty())
      throw Error(DLRT_INVALID_ARGUMENT,
                  "TrainStep: the step function returns no metrics and updates nothing");
    dlrt::CompileOptions o;
    o.run_assigns = !tr.optimizers.empty() || !tr.state_updates.empty();
    if (options_.log_device_placement) o.log_device_placement = true;
    if (!options_.use_capture) o.use_capture = false;
    if (options_.device == "auto") o.auto_device = true;
    tr.runner =
        std::make_unique<detail::Runner>(ctx_, g, tr.placeholders, tr.feed_names, fetches, o);
  } catch (...) {
    trace_ = std::move(old);
    for (size_t k = 0; k < bindings_.size(); ++k) {
      bindings_[k].vars = k < old_vars.size() ? old_vars[k].first : std::vector<Value>{};
      bindings_[k].calls = k < old_vars.size() ? old_vars[k].second : 0;
    }
    throw;
  }
  // A retrace: the values of the last trace carry over to the variables of the same names.
  if (old) {
    const std::map<std::string, Model::NamedValue> values = read_values(*old);
    for (const auto& [name, v] : trace_->variables) {
      auto it = values.find(name);
      if (it != values.end() && it->second.dims == v.dims())
        trace_->graph->write_variable(v, it->second.values);
    }
  }
}

inline Logs TrainStep::run(const std::vector<Feed>& feeds) {
  bool same = trace_ && feeds.size() == trace_->feed_names.size();
  for (size_t i = 0; same && i < feeds.size(); ++i)
    same = feeds[i].name == trace_->feed_names[i] && feeds[i].array->dtype() == trace_->dtypes[i] &&
           feeds[i].array->dims() == trace_->dims[i];
  // Models that lend to this step keep lending across a retrace (their values carry over).
  if (!same) build_trace(feeds);
  for (const Binding& b : bindings_)
    if (!b.vars.empty() && b.model == nullptr)
      throw Error(DLRT_FAILED_PRECONDITION,
                  "TrainStep: model " + b.prefix.substr(0, b.prefix.size() - 1) +
                      " was compiled again or destroyed since the step used it; make a new step");
  lend_from_models();
  if (has_pending_) {
    write_values(pending_, true, "load");
    pending_.clear();
    has_pending_ = false;
  }
  Trace& t = *trace_;
  if (!same) {
    for (OptimizerState& o : t.optimizers) {
      o.steps_done = static_cast<int64_t>(t.graph->read_variable<float>(o.iterations).at(0));
      o.written = -1.f;
    }
    t.runner->exe.set_run_count(runs_);
  }
  for (OptimizerState& o : t.optimizers) {
    const float lr = static_cast<float>(o.optimizer->learning_rate().at(o.steps_done));
    if (lr != o.written) {
      t.graph->write_variable(o.learning_rate, std::vector<float>{lr});
      o.written = lr;
    }
  }
  for (size_t i = 0; i < feeds.size(); ++i)
    check(dlrt_tensor_write(t.runner->feeds[i].get(), feeds[i].array->data(),
                            feeds[i].array->bytes().size()));
  t.runner->run();
  ++runs_;
  for (OptimizerState& o : t.optimizers) ++o.steps_done;
  Logs logs;
  for (size_t m = 0; m < t.metric_names.size(); ++m)
    if (t.scalar[m]) logs.push_back({t.metric_names[m], t.runner->scalar(m)});
  return logs;
}

inline constexpr const char* kStepCheckpointFormat = "dlrt.nn.step/1";

inline void TrainStep::save(const std::string& path) {
  if (!trace_) throw Error(DLRT_FAILED_PRECONDITION, "TrainStep::save: the step has not run yet");
  const std::map<std::string, Model::NamedValue> values = read_values(*trace_);
  std::vector<SafeTensorView> tensors;
  for (const auto& [name, v] : values)
    tensors.push_back({name, DLRT_F32, v.dims, v.values.data(), v.values.size() * sizeof(float)});
  write_safetensors(path, tensors,
                    {{"format", kStepCheckpointFormat}, {"runs", std::to_string(runs_)}});
}

inline void TrainStep::load(const std::string& path) {
  const SafeTensors file = SafeTensors::open(path);
  auto format = file.metadata("format");
  if (!format || *format != kStepCheckpointFormat)
    throw Error(DLRT_INVALID_ARGUMENT, "TrainStep::load: '" + path + "' has format '" +
                                           (format ? *format : std::string("(none)")) +
                                           "'; expected '" + kStepCheckpointFormat +
                                           "' (TrainStep::save)");
  std::map<std::string, Model::NamedValue> values;
  for (const SafeTensorView& t : file.entries()) {
    if (t.dtype != DLRT_F32)
      throw Error(DLRT_INVALID_ARGUMENT, "TrainStep::load: '" + path + "': tensor '" + t.name +
                                             "' is " + dtype_name(t.dtype) + "; expected f32");
    Model::NamedValue v{t.name, t.dims, std::vector<float>(t.bytes / sizeof(float))};
    if (!v.values.empty()) std::memcpy(v.values.data(), t.data, v.values.size() * sizeof(float));
    values[t.name] = std::move(v);
  }
  uint64_t runs = 0;
  const std::string text = file.metadata("runs").value_or("");
  try {
    size_t used = 0;
    runs = std::stoull(text, &used);
    if (used != text.size()) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw Error(DLRT_DATA_LOSS,
                "TrainStep::load: '" + path + "': metadata runs = '" + text + "' is not a count");
  }
  if (trace_) {
    lend_from_models();  // the models' weights are then replaced by the file's
    write_values(values, true, "TrainStep::load: '" + path + "'");
    for (OptimizerState& o : trace_->optimizers) {
      o.steps_done = static_cast<int64_t>(trace_->graph->read_variable<float>(o.iterations).at(0));
      o.written = -1.f;
    }
    trace_->runner->exe.set_run_count(runs);
  } else {
    pending_ = std::move(values);
    has_pending_ = true;
  }
  runs_ = runs;
}

// Writes `values` into the step's variables of the same names; with `complete`, every
// variable must be there. Unknown names and wrong shapes are refused, naming them.
inline void TrainStep::write_values(const std::map<std::string, Model::NamedValue>& values,
                                    bool complete, const std::string& who) {
  std::set<std::string> known;
  for (const auto& [name, v] : trace_->variables) {
    known.insert(name);
    auto it = values.find(name);
    if (it == values.end()) {
      if (complete)
        throw Error(DLRT_INVALID_ARGUMENT, who + ": has no tensor '" + name + "' " +
                                               dims_string(v.dims()) + ", a variable of the step");
      continue;
    }
    if (it->second.dims != v.dims())
      throw Error(DLRT_INVALID_ARGUMENT, who + ": tensor '" + name + "' is " +
                                             dims_string(it->second.dims) + "; the step's is " +
                                             dims_string(v.dims()));
  }
  for (const auto& [name, v] : values)
    if (!known.count(name))
      throw Error(DLRT_INVALID_ARGUMENT,
                  who + ": tensor '" + name + "' is not a variable of the step");
  for (const auto& [name, v] : trace_->variables) {
    auto it = values.find(name);
    if (it != values.end()) trace_->graph->write_variable(v, it->second.values);
  }
}

}  // namespace dlrt::nn

#endif  // DLRT_NN_TRAIN_STEP_HPP_
