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
// Under a distribution strategy (distribute.hpp): a step made while a StrategyScope lives (or
// given StepOptions::strategy) runs data-parallel, as tf.distribute's strategy.run does for a
// custom loop. Each of the L local replicas traces the function into its own graph on its
// device (the models' own device scopes and StepOptions::device do not apply), with every
// feed split on dim 0: replica g of the R = L × workers in sync takes rows [g·b, (g+1)·b),
// b = rows / R (rows must be a multiple of R: INVALID_ARGUMENT naming the feed otherwise).
// Each run is split in two executables per replica, as fit's step under a strategy:
//   grads: the forward pass on the replica's rows, every optimizer's gradients, the new
//     moving statistics and the results; no variable changes;
//   one all-reduce sums, over every replica of every worker, the gradients, the moving
//     statistics and the f32 scalar results;
//   apply: every optimizer's update from the summed gradients × 1/R, the moving statistics
//     set to the sum × 1/R (TensorFlow's MEAN aggregation of mirrored variables).
// So a loss that is a mean over its batch (Tape::loss, Tape::mean) gives the single-device
// step on the global batch, within float tolerance (summation order differs, and BatchNorm
// normalises by each replica's batch statistics, as without SyncBatchNorm). run() returns each
// scalar result averaged over the replicas; output() concatenates the local replicas' results
// on dim 0. Random draws (Dropout, Tape::random_normal) are salted per replica. The function
// is traced once per local replica, so it must only build ops (no side effects it counts on
// happening once). Every replica holds the same variables: the models' weights are lent to
// each; with several workers the chief's are broadcast after each trace and load (every
// worker must make the same step and feed it the same global batches, as for fit).
//
// Not yet: a C API of nn steps (C programs write a custom step on the graph API, with
// dlrt_graph_gradients, dlrt_graph_assign and dlrt_strategy_all_reduce: docs/nn.md "From C").
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
#include "dlrt/nn/loss_scale.hpp"
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
  // Data-parallel over this strategy's replicas (see the top of this file); null: the
  // strategy of the StrategyScope live when the step is made, if any. Not with `device`.
  // The strategy object must outlive the step.
  const DistributionStrategy* strategy = nullptr;
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
namespace detail {
struct StepTrace;
}

// What a step function builds with: its inputs, ops, losses and the updates (minimize). Only
// valid during the call of the function (while the step is traced; under a strategy, once
// per local replica, each tape building its replica's graph).
class Tape : private detail::ModelCaller {
 public:
  Graph& graph() { return *graph_; }
  // The placeholder fed by run()'s feed `name` (its dtype and shape: under a strategy, this
  // replica's rows). INVALID_ARGUMENT naming it and the feeds when the run has no such feed.
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
  // Under a strategy: this tape's replica (0 .. replicas in sync - 1) and their number;
  // 0 and 1 without one.
  uint64_t replica() const;
  int64_t replicas_in_sync() const;

 private:
  friend class TrainStep;
  Tape(TrainStep& step, detail::StepTrace& trace);
  std::vector<Value> call_model(Model& model, const std::vector<Value>& inputs,
                                bool training) override;
  Value fill_like(Value x, double v) {
    const std::vector<int64_t> d = x.dims();
    return graph_->op1("fill", {}, {{"shape", d}, {"value", v}, {"dtype", x.dtype()}});
  }
  // Replica 0 keeps `seed` (what one device draws); the others draw their own.
  uint64_t salted(uint64_t seed) const;

  TrainStep& step_;
  detail::StepTrace& trace_;
  Graph* graph_;
  int random_draws_ = 0;
};

namespace detail {
// A minimize of the step: the optimizer, its name and its step-count and rate variables.
struct StepOptimizer {
  std::shared_ptr<const Optimizer> optimizer;
  std::string name;
  Value iterations, learning_rate;
  int64_t steps_done = 0;  // host copy of iterations, for the rate schedule
  float written = -1.f;    // the rate last written
};

// One trace of the step function: its graph and what runs it. Without a strategy there is one,
// compiled into one executable; under a strategy one per local replica (the top of the file).
struct StepTrace {
  std::unique_ptr<Graph> graph;
  size_t replica = 0;          // the local replica (0 without a strategy)
  uint64_t global_replica = 0; // rank × local replicas + replica
  std::vector<std::string> feed_names;  // placeholders, in feed order
  std::vector<Value> placeholders;      // under a strategy: this replica's rows of each feed
  std::vector<dlrt_dtype> dtypes;
  std::vector<std::vector<int64_t>> dims;  // of the feeds as run() takes them (all rows)
  std::set<std::string> read;              // the feeds the function read
  std::vector<std::pair<std::string, Value>> variables;  // every step variable, by name
  std::vector<std::vector<Value>> model_vars;  // per binding: the model's variables (plan order)
  std::vector<int> calls;                      // per binding: calls in this trace
  std::vector<StepOptimizer> optimizers;
  std::set<std::string> minimized;  // variables some optimizer updates
  std::map<std::string, std::pair<Value, Value>> state_updates;  // name -> (variable, value)
  std::vector<std::string> metric_names;  // every result, in the function's order
  std::vector<bool> scalar;               // per result: an f32 scalar (a metric of run())
  // Under a strategy: every optimizer's gradients (fetched after the results, then the new
  // moving statistics), and apply's placeholders for their sums, in the same order.
  std::vector<Value> reduced_values, reduced_feeds;
  std::vector<std::string> reduced_names;  // the feeds' names ("apply/sum_<k>")
  Value apply_fetch;                       // one value apply computes (its fetch)
  std::unique_ptr<Runner> runner;  // the step; under a strategy its grads half
  std::unique_ptr<Runner> apply;   // under a strategy: the updates from the sums

  std::vector<Value>& vars_of(size_t binding) {
    if (model_vars.size() <= binding) {
      model_vars.resize(binding + 1);
      calls.resize(binding + 1, 0);
    }
    return model_vars[binding];
  }
};
}  // namespace detail

class TrainStep : private detail::StateHolder {
 public:
  TrainStep(const Context& ctx, StepFunction fn, StepOptions options = {})
      : ctx_(ctx), fn_(std::move(fn)), options_(std::move(options)) {
    if (!fn_) throw Error(DLRT_INVALID_ARGUMENT, "TrainStep: the step function is empty");
    if (!options_.strategy) options_.strategy = detail::current_strategy;
    if (options_.strategy) {
      if (!options_.device.empty())
        throw Error(DLRT_INVALID_ARGUMENT,
                    "TrainStep: StepOptions::device '" + options_.device +
                        "' and a distribution strategy are both given; under a strategy each "
                        "replica runs on its strategy device: leave device empty");
      strategy_ = options_.strategy->impl();
      devices_ = options_.strategy->devices();
      in_sync_ = options_.strategy->num_replicas_in_sync();
    }
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
  // compiled executable on `feeds`. Returns the function's metrics, in its order (under a
  // strategy, each the mean over the replicas).
  Logs run(const std::vector<Feed>& feeds);
  // A result of the last run that is not an f32 scalar (a batch of reconstructions, logits),
  // as the function returned it: dtype and dims of its Value (under a strategy the local
  // replicas' results concatenated on dim 0). NOT_FOUND naming the results.
  Array output(const std::string& name);
  // Runs done (restored by load); random draws and Dropout masks follow it.
  uint64_t runs() const { return runs_; }
  // Replicas in sync under the step's strategy (1 without one).
  int64_t replicas_in_sync() const { return in_sync_; }
  // Every variable of the step as local replica `replica` holds it (they stay identical under
  // a strategy; 0 is the only one without), in the order the function made them.
  // FAILED_PRECONDITION before the first run, OUT_OF_RANGE for a replica it does not have.
  std::vector<Model::NamedValue> state(size_t replica = 0) {
    if (traces_.empty())
      throw Error(DLRT_FAILED_PRECONDITION, "TrainStep::state: the step has not run yet");
    if (replica >= traces_.size())
      throw Error(DLRT_OUT_OF_RANGE, "TrainStep::state: replica " + std::to_string(replica) +
                                         "; the step has " + std::to_string(traces_.size()));
    Trace& t = *traces_[replica];
    std::vector<Model::NamedValue> out;
    for (const auto& [name, v] : t.variables)
      out.push_back({name, v.dims(), t.graph->read_variable<float>(v)});
    return out;
  }

  // Every variable of the step (the models' weights as "<model>/<name>", the optimizers'
  // state) to a safetensors file (atomically, as Model::save_weights), and back: load
  // restores all of them and the run count, now when the step has run, else at the next run
  // (after it has taken the models' weights, which the file's then replace). A GAN stopped
  // after a save and resumed from it makes the uninterrupted run's updates.
  void save(const std::string& path);
  void load(const std::string& path);

  // The compiled executable of the last trace (placement, profiling; under a strategy replica
  // 0's grads executable); FAILED_PRECONDITION before the first run.
  Executable& executable() {
    if (traces_.empty()) throw Error(DLRT_FAILED_PRECONDITION, "TrainStep: it has not run yet");
    return traces_.front()->runner->exe;
  }

 private:
  friend class Tape;
  using Trace = detail::StepTrace;

  // A model the function calls: its plan; each trace holds the step's variables of its layers
  // (Trace::model_vars, indexed as plan->state; invalid for optimizer entries).
  struct Binding {
    Model* model;  // null once the model is recompiled or destroyed (detach)
    std::string prefix;  // "generator/": the step's names of its variables
    std::shared_ptr<const detail::Plan> plan;
  };

  bool mirrored() const { return strategy_ != nullptr; }
  // Whether a model bound to the step computes some layer in f16 (Plan::compute_dtype).
  bool computes_f16() const {
    for (const Binding& b : bindings_)
      for (dlrt_dtype d : b.plan->compute_dtype)
        if (d == DLRT_F16) return true;
    return false;
  }
  Trace& primary() { return *traces_.front(); }
  // The primary trace's variables of binding `k` (empty when the trace does not call it).
  const std::vector<Value>* primary_vars(size_t k) {
    if (traces_.empty() || traces_.front()->model_vars.size() <= k) return nullptr;
    const std::vector<Value>& v = traces_.front()->model_vars[k];
    return v.empty() ? nullptr : &v;
  }

  // ---- the holder hand-over (model.hpp's StateHolder) ----
  void give_back(Model& model) override {
    const size_t k = binding_index(model);
    const std::vector<Value>* vars = primary_vars(k);
    if (vars == nullptr) return;
    const detail::Plan& plan = *bindings_[k].plan;
    std::vector<Model::NamedValue> values;
    for (size_t i : layer_state(plan)) {
      const detail::StateVar& s = plan.state[i];
      values.push_back({s.name, s.dims, primary().graph->read_variable<float>((*vars)[i])});
    }
    model.set_state(values);
  }
  void detach(Model& model) override { bindings_[binding_index(model)].model = nullptr; }
  // Takes the weights of every model of this trace that does not lend them to this step now
  // (into every replica's copy).
  void lend_from_models() {
    for (size_t k = 0; k < bindings_.size(); ++k) {
      Binding& b = bindings_[k];
      if (primary_vars(k) == nullptr || b.model == nullptr || b.model->holder_ == this) continue;
      const std::vector<Model::NamedValue> state = b.model->state();  // reclaims from others
      for (auto& t : traces_)
        for (size_t i : layer_state(*b.plan))
          t->graph->write_variable(t->model_vars[k][i], state.at(i).values);
      b.model->holder_ = this;
    }
  }
  size_t binding_index(Model& model) const {
    for (size_t k = 0; k < bindings_.size(); ++k)
      if (bindings_[k].model == &model) return k;
    throw Error(DLRT_INTERNAL, "TrainStep: model " + model.name() + " is not bound to it");
  }
  // The plan entries a step holds of a model: its layers' variables (no optimizer state).
  static std::vector<size_t> layer_state(const detail::Plan& p) {
    std::vector<size_t> out;
    for (const auto& ids : p.layer_state) out.insert(out.end(), ids.begin(), ids.end());
    return out;
  }
  static Value make_variable(Trace& t, const std::string& name, const Shape& dims,
                             bool trainable, double init) {
    Value v = t.graph->variable(name, DLRT_F32, dims, "fill", {{"value", init}}, trainable);
    t.variables.push_back({name, v});
    return v;
  }
  void check_feeds(const std::vector<Feed>& feeds) const;
  void build_trace(const std::vector<Feed>& feeds);
  std::unique_ptr<Trace> trace_replica(const std::vector<Feed>& feeds, size_t replica);
  void compile_trace(Trace& t, const StepMetrics& results);
  void run_replicas(const std::vector<Feed>& feeds);
  void sync_from_chief();
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
  std::shared_ptr<dlrt::Strategy> strategy_;  // null without a strategy
  std::vector<std::string> devices_;          // the local replicas' devices
  int64_t in_sync_ = 1;
  std::vector<Binding> bindings_;
  std::vector<std::unique_ptr<Trace>> traces_;  // one, or one per local replica
  uint64_t runs_ = 0;
  std::map<std::string, Model::NamedValue> pending_;  // load() before the first run
  bool has_pending_ = false;
};

// ---- Tape ----

inline Tape::Tape(TrainStep& step, detail::StepTrace& trace)
    : step_(step), trace_(trace), graph_(trace.graph.get()) {}

inline uint64_t Tape::replica() const { return trace_.global_replica; }
inline int64_t Tape::replicas_in_sync() const { return step_.in_sync_; }

inline uint64_t Tape::salted(uint64_t seed) const {
  return trace_.global_replica == 0
             ? seed
             : derive_seed(seed, "replica/" + std::to_string(trace_.global_replica));
}

inline Value Tape::input(const std::string& name) {
  detail::StepTrace& t = trace_;
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
  const uint64_t seed = salted(
      derive_seed(step_.options_.seed, "tape/random_normal/" + std::to_string(random_draws_++)));
  return graph_->op1("random_normal", {},
                     {{"shape", dims}, {"stddev", stddev}, {"seed", static_cast<int64_t>(seed)}});
}

inline std::vector<Value> Tape::call_model(Model& model, const std::vector<Value>& inputs,
                                           bool training) {
  model.ensure_plan("TrainStep");
  size_t k = step_.bindings_.size();
  for (size_t x = 0; x < step_.bindings_.size(); ++x)
    if (step_.bindings_[x].model == &model) k = x;
  if (k == step_.bindings_.size()) {
    // A new model: named after it, made unique among the step's models.
    std::string prefix = model.name();
    for (int n = 1;; ++n) {
      bool taken = false;
      for (const TrainStep::Binding& x : step_.bindings_) taken |= x.prefix == prefix + "/";
      if (!taken) break;
      prefix = model.name() + "_" + std::to_string(n);
    }
    model.reclaim();  // another step's weights come home before this one binds
    step_.bindings_.push_back({&model, prefix + "/", model.plan_});
  }
  TrainStep::Binding& b = step_.bindings_[k];
  if (b.plan != model.plan_)
    throw Error(DLRT_FAILED_PRECONDITION, "TrainStep: model " + model.name() +
                                              " was compiled again after the step first ran; "
                                              "make a new step for it");
  const detail::Plan& plan = *b.plan;
  if (inputs.size() != plan.inputs.size())
    throw Error(DLRT_INVALID_ARGUMENT, model.name() + ": called on " +
                                           std::to_string(inputs.size()) + " inputs; it takes " +
                                           std::to_string(plan.inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool ids = detail::model_input_ids(plan, i) > 0;  // this input's layers take ids
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
  // Under a strategy the replica's device scope (made by the trace) places everything.
  detail::Scopes scopes(g, step_.mirrored() ? std::vector<std::string>{} : plan.device_scopes);
  std::vector<Value>& vars = trace_.vars_of(k);
  if (vars.empty()) {
    vars.assign(plan.state.size(), Value());
    for (size_t i : TrainStep::layer_state(plan)) {
      const detail::StateVar& s = plan.state[i];
      vars[i] = TrainStep::make_variable(trace_, b.prefix + s.name, s.dims, s.trainable, 0.0);
    }
  }
  // Call 0 draws as fit's step does (the model's seed, scope "<model>/"); later calls of the
  // same model get their own seed and scope.
  const int call = trace_.calls[k]++;
  const uint64_t seed =
      salted(call == 0 ? plan.seed : derive_seed(plan.seed, "step_call/" + std::to_string(call)));
  std::vector<StateUpdate> updates;
  CallContext c{g, training, seed,
                b.prefix + (call == 0 ? "" : "call_" + std::to_string(call) + "/"),
                training ? &updates : nullptr};
  std::vector<Value> out = detail::run_plan(plan, c, inputs, vars);
  for (const StateUpdate& u : updates) {
    std::string name;
    for (size_t i = 0; i < vars.size() && name.empty(); ++i)
      if (vars[i] == u.variable) name = b.prefix + plan.state[i].name;
    trace_.state_updates[name] = {u.variable, u.value};  // the last call's are kept
  }
  return out;
}

inline Value Tape::variable(const Variable& v) {
  for (size_t k = 0; k < step_.bindings_.size(); ++k) {
    const TrainStep::Binding& b = step_.bindings_[k];
    if (b.model != v.model || v.model == nullptr) continue;
    if (trace_.model_vars.size() <= k || trace_.model_vars[k].empty()) break;
    for (size_t i = 0; i < b.plan->state.size(); ++i)
      if (b.plan->state[i].name == v.name && trace_.model_vars[k][i]) return trace_.model_vars[k][i];
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
  detail::StepTrace& t = trace_;
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
  for (const detail::StepOptimizer& o : t.optimizers)
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
    if (!graph_->depends_on(loss, p))
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
  detail::StepOptimizer o;
  o.optimizer = optimizer.clone();
  o.name = opt_name;
  o.learning_rate = TrainStep::make_variable(t, opt_name + "/learning_rate", {}, false,
                                             optimizer.learning_rate().at(0));
  o.iterations = TrainStep::make_variable(t, opt_name + "/iterations", {}, false, 0.0);
  std::vector<std::vector<Value>> slots;
  for (size_t k = 0; k < params.size(); ++k) {
    slots.emplace_back();
    for (const std::string& slot : optimizer.slot_names())
      slots.back().push_back(TrainStep::make_variable(t, opt_name + "/" + names[k] + "/" + slot,
                                                      params[k].dims(), false, 0.0));
  }
  Graph& g = *graph_;
  Value step = g.op1("add", {o.iterations, g.constant<float>("", {}, {1.f})});
  if (step_.computes_f16()) {
    // A model of the step computes in f16 (mixed_float16): this optimizer scales its loss
    // dynamically (loss_scale.hpp), with its own scale, as a LossScaleOptimizer around it
    // would in Keras (where a custom loop must wrap it by hand; here it is the default).
    if (step_.mirrored())
      throw Error(DLRT_UNIMPLEMENTED,
                  "minimize: a model of the step computes in f16 (mixed_float16), whose loss "
                  "scaling is built for one device only; use mixed_bfloat16 (no scaling needed) "
                  "or one device");
    Value scale = TrainStep::make_variable(t, opt_name + "/loss_scale", {}, false,
                                           detail::kInitialLossScale);
    Value good = TrainStep::make_variable(t, opt_name + "/loss_scale_good_steps", {}, false, 0.0);
    Value finite;
    std::vector<Value> grads = detail::scaled_gradients(
        g, loss, scale, [&](Value scaled) { return g.gradients(scaled, params); }, &finite);
    g.assign(o.iterations, g.op1("where", {finite, step, o.iterations}));
    o.optimizer->apply_all(g, params, grads, slots, step, o.learning_rate, finite);
    detail::update_loss_scale(g, scale, good, finite);
    t.optimizers.push_back(std::move(o));
    return;
  }
  g.assign(o.iterations, step);
  std::vector<Value> grads = g.gradients(loss, params);
  if (step_.mirrored()) {
    // The grads executable fetches this replica's gradients; apply updates from their sum
    // over the replicas (fed in) times 1/R: the gradient of the mean of the replicas' losses.
    const float inv = 1.f / static_cast<float>(step_.in_sync_);
    for (Value& grad : grads) {
      t.reduced_values.push_back(grad);
      t.reduced_names.push_back("apply/sum_" + std::to_string(t.reduced_feeds.size()));
      t.reduced_feeds.push_back(g.placeholder(t.reduced_names.back(), DLRT_F32, grad.dims()));
      grad = g.op1("mul", {t.reduced_feeds.back(), g.constant<float>("", {}, {inv})});
      if (!t.apply_fetch) t.apply_fetch = grad;
    }
  }
  o.optimizer->apply_all(g, params, grads, slots, step, o.learning_rate);
  t.optimizers.push_back(std::move(o));
}

// ---- TrainStep ----

inline void TrainStep::check_feeds(const std::vector<Feed>& feeds) const {
  std::set<std::string> seen;
  for (const Feed& f : feeds) {
    if (!seen.insert(f.name).second)
      throw Error(DLRT_INVALID_ARGUMENT, "TrainStep: feed '" + f.name + "' is given twice");
    if (!mirrored()) continue;
    const std::vector<int64_t> d = f.array->dims();
    if (d.empty() || d[0] % in_sync_ != 0 || d[0] == 0)
      throw Error(DLRT_INVALID_ARGUMENT,
                  "TrainStep: feed '" + f.name + "' is " + dims_string(d) +
                      "; under the strategy every feed is split on dim 0 over " +
                      std::to_string(in_sync_) + " replicas, so its rows must be a positive "
                      "multiple of " + std::to_string(in_sync_));
  }
}

inline void TrainStep::build_trace(const std::vector<Feed>& feeds) {
  for (const Binding& b : bindings_)
    if (b.model == nullptr)
      throw Error(DLRT_FAILED_PRECONDITION,
                  "TrainStep: model " + b.prefix.substr(0, b.prefix.size() - 1) +
                      " was compiled again or destroyed since the step used it; make a new step");
  check_feeds(feeds);
  // The new traces replace the old only when every one is built: on any error the step, and
  // the models' variables in it, stay as they were.
  std::vector<std::unique_ptr<Trace>> fresh;
  const size_t replicas = mirrored() ? devices_.size() : 1;
  for (size_t r = 0; r < replicas; ++r) fresh.push_back(trace_replica(feeds, r));
  // A retrace: the values of the last trace carry over to the variables of the same names.
  if (!traces_.empty()) {
    const std::map<std::string, Model::NamedValue> values = read_values(primary());
    for (auto& t : fresh)
      for (const auto& [name, v] : t->variables) {
        auto it = values.find(name);
        if (it != values.end() && it->second.dims == v.dims())
          t->graph->write_variable(v, it->second.values);
      }
  }
  traces_ = std::move(fresh);
}

// Calls the step function on a tape over a new graph: replica `replica`'s under a strategy.
inline std::unique_ptr<detail::StepTrace> TrainStep::trace_replica(const std::vector<Feed>& feeds,
                                                                   size_t replica) {
  auto t = std::make_unique<Trace>();
  t->graph = std::make_unique<Graph>(ctx_);
  t->replica = replica;
  Graph& g = *t->graph;
  std::unique_ptr<dlrt::DeviceScope> scope;
  if (mirrored()) {
    t->global_replica = static_cast<uint64_t>(strategy_->rank()) * devices_.size() + replica;
    scope = std::make_unique<dlrt::DeviceScope>(g, devices_[replica]);
  } else if (!options_.device.empty() && options_.device != "auto") {
    scope = std::make_unique<dlrt::DeviceScope>(g, options_.device);
  }
  for (const Feed& f : feeds) {
    std::vector<int64_t> dims = f.array->dims();
    t->feed_names.push_back(f.name);
    t->dtypes.push_back(f.array->dtype());
    t->dims.push_back(dims);
    if (mirrored()) dims[0] /= in_sync_;
    t->placeholders.push_back(g.placeholder(f.name, f.array->dtype(), dims));
  }
  Tape tape(*this, *t);
  StepMetrics results;
  {
    detail::ModelCaller* outer = detail::active_tape;
    detail::active_tape = &tape;
    struct Restore {
      detail::ModelCaller* outer;
      ~Restore() { detail::active_tape = outer; }
    } restore{outer};
    results = fn_(tape);
  }
  for (const std::string& n : t->feed_names)
    if (!t->read.count(n))
      throw Error(DLRT_INVALID_ARGUMENT,
                  "TrainStep: feed '" + n + "' is not read by the step function (Tape::input)");
  compile_trace(*t, results);
  return t;
}

// The trace's fetches and executables: one step, or under a strategy grads and apply.
inline void TrainStep::compile_trace(Trace& t, const StepMetrics& results) {
  Graph& g = *t.graph;
  const float inv = 1.f / static_cast<float>(in_sync_);
  for (const auto& [name, u] : t.state_updates) {
    if (!mirrored()) {
      g.assign(u.first, u.second);
      continue;
    }
    // The replicas' new moving statistics are summed too; apply sets their mean.
    t.reduced_values.push_back(u.second);
    t.reduced_names.push_back("apply/sum_" + std::to_string(t.reduced_feeds.size()));
    t.reduced_feeds.push_back(g.placeholder(t.reduced_names.back(), DLRT_F32, u.second.dims()));
    Value mean = g.op1("mul", {t.reduced_feeds.back(), g.constant<float>("", {}, {inv})});
    if (!t.apply_fetch) t.apply_fetch = mean;
    g.assign(u.first, mean);
  }
  std::vector<Value> fetches;
  for (const auto& [name, v] : results) {
    if (!v) throw Error(DLRT_INVALID_ARGUMENT, "TrainStep: result '" + name + "' has no value");
    for (const std::string& n : t.metric_names)
      if (n == name)
        throw Error(DLRT_INVALID_ARGUMENT, "TrainStep: result '" + name + "' is returned twice");
    t.metric_names.push_back(name);
    t.scalar.push_back(v.dims().empty() && v.dtype() == DLRT_F32);
    fetches.push_back(v);
  }
  if (fetches.empty() && t.optimizers.empty() && t.state_updates.empty())
    throw Error(DLRT_INVALID_ARGUMENT,
                "TrainStep: the step function returns no metrics and updates nothing");
  const bool updates = !t.optimizers.empty() || !t.state_updates.empty();
  fetches.insert(fetches.end(), t.reduced_values.begin(), t.reduced_values.end());
  dlrt::CompileOptions o;
  o.run_assigns = updates && !mirrored();
  if (options_.log_device_placement) o.log_device_placement = true;
  if (!options_.use_capture) o.use_capture = false;
  if (options_.device == "auto") o.auto_device = true;
  t.runner = std::make_unique<detail::Runner>(ctx_, g, t.placeholders, t.feed_names, fetches, o);
  if (mirrored() && updates) {
    o.run_assigns = true;
    t.apply = std::make_unique<detail::Runner>(ctx_, g, t.reduced_feeds, t.reduced_names,
                                               std::vector<Value>{t.apply_fetch}, o);
  }
}

// One run under a strategy: every replica's grads on its rows, one all-reduce of the scalar
// results, gradients and moving statistics, then every replica's apply from the sums.
inline void TrainStep::run_replicas(const std::vector<Feed>& feeds) {
  detail::for_each_replica(traces_.size(), [&](size_t r) {
    Trace& t = *traces_[r];
    for (size_t i = 0; i < feeds.size(); ++i) {
      const size_t bytes = feeds[i].array->bytes().size() / static_cast<size_t>(in_sync_);
      const uint8_t* rows = feeds[i].array->bytes().data() + t.global_replica * bytes;
      check(dlrt_tensor_write(t.runner->feeds[i].get(), rows, bytes));
    }
    t.runner->run();
  });
  const size_t results = primary().metric_names.size();
  std::vector<size_t> summed;  // fetch indices: the scalar results, then every reduced value
  for (size_t m = 0; m < results; ++m)
    if (primary().scalar[m]) summed.push_back(m);
  for (size_t k = 0; k < primary().reduced_values.size(); ++k) summed.push_back(results + k);
  if (!summed.empty()) {
    std::vector<Tensor*> tensors;
    for (auto& t : traces_)
      for (size_t f : summed) tensors.push_back(&t->runner->fetches[f]);
    strategy_->all_reduce(tensors, summed.size());
  }
  if (!primary().apply) return;
  detail::for_each_replica(traces_.size(), [&](size_t r) {
    Trace& t = *traces_[r];
    std::vector<const Tensor*> in;
    for (size_t k = 0; k < t.reduced_feeds.size(); ++k) in.push_back(&t.runner->fetches[results + k]);
    t.apply->exe.run(in, t.apply->fetches);
  });
}

// Worker 0's replica 0 variables into every replica of every worker (several workers only:
// the local replicas were all written from the same values).
inline void TrainStep::sync_from_chief() {
  if (!mirrored() || strategy_->num_workers() <= 1) return;
  std::vector<detail::ReplicaVariables> replicas;
  for (size_t r = 0; r < traces_.size(); ++r) {
    detail::ReplicaVariables v{traces_[r]->graph.get(), {}, ctx_.find_device(devices_[r])};
    for (const auto& [name, value] : traces_[r]->variables) v.variables.push_back(value);
    replicas.push_back(std::move(v));
  }
  detail::broadcast_from_chief(ctx_, *strategy_, replicas);
}

inline Logs TrainStep::run(const std::vector<Feed>& feeds) {
  bool same = !traces_.empty() && feeds.size() == primary().feed_names.size();
  for (size_t i = 0; same && i < feeds.size(); ++i)
    same = feeds[i].name == primary().feed_names[i] &&
           feeds[i].array->dtype() == primary().dtypes[i] &&
           feeds[i].array->dims() == primary().dims[i];
  // Models that lend to this step keep lending across a retrace (their values carry over).
  if (!same) build_trace(feeds);
  for (size_t k = 0; k < bindings_.size(); ++k)
    if (primary_vars(k) != nullptr && bindings_[k].model == nullptr)
      throw Error(DLRT_FAILED_PRECONDITION,
                  "TrainStep: model " + bindings_[k].prefix.substr(0, bindings_[k].prefix.size() - 1) +
                      " was compiled again or destroyed since the step used it; make a new step");
  lend_from_models();
  if (has_pending_) {
    write_values(pending_, true, "load");
    pending_.clear();
    has_pending_ = false;
  }
  if (!same) {
    sync_from_chief();
    for (auto& t : traces_) {
      for (detail::StepOptimizer& o : t->optimizers) {
        o.steps_done = static_cast<int64_t>(t->graph->read_variable<float>(o.iterations).at(0));
        o.written = -1.f;
      }
      t->runner->exe.set_run_count(runs_);
    }
  }
  for (auto& t : traces_)
    for (detail::StepOptimizer& o : t->optimizers) {
      const float lr = static_cast<float>(o.optimizer->learning_rate().at(o.steps_done));
      if (lr != o.written) {
        t->graph->write_variable(o.learning_rate, std::vector<float>{lr});
        o.written = lr;
      }
    }
  Trace& t = primary();
  if (mirrored()) {
    run_replicas(feeds);
  } else {
    for (size_t i = 0; i < feeds.size(); ++i)
      check(dlrt_tensor_write(t.runner->feeds[i].get(), feeds[i].array->data(),
                              feeds[i].array->bytes().size()));
    t.runner->run();
  }
  ++runs_;
  for (auto& tr : traces_)
    for (detail::StepOptimizer& o : tr->optimizers) ++o.steps_done;
  Logs logs;
  for (size_t m = 0; m < t.metric_names.size(); ++m)
    if (t.scalar[m])
      logs.push_back({t.metric_names[m], t.runner->scalar(m) / static_cast<double>(in_sync_)});
  return logs;
}

inline Array TrainStep::output(const std::string& name) {
  std::string names;
  if (!traces_.empty() && runs_ > 0)
    for (size_t m = 0; m < primary().metric_names.size(); ++m) {
      if (primary().metric_names[m] == name) {
        const Tensor& first = primary().runner->fetches.at(m);
        std::vector<int64_t> dims = first.dims();
        std::vector<uint8_t> bytes = first.read<uint8_t>();
        if (dims.empty()) {
          dims = {1};
        } else {  // under a strategy: every local replica's rows, in replica order
          for (size_t r = 1; r < traces_.size(); ++r) {
            const std::vector<uint8_t> more = traces_[r]->runner->fetches.at(m).read<uint8_t>();
            bytes.insert(bytes.end(), more.begin(), more.end());
          }
          dims[0] *= static_cast<int64_t>(traces_.size());
        }
        return Array(first.dtype(), dims, bytes);
      }
      names += (names.empty() ? "" : ", ") + primary().metric_names[m];
    }
  throw Error(DLRT_NOT_FOUND, "TrainStep::output: no result '" + name + "' of a run" +
                                  (names.empty() ? " (the step has not run)"
                                                 : " (results: " + names + ")"));
}

inline constexpr const char* kStepCheckpointFormat = "dlrt.nn.step/1";

inline void TrainStep::save(const std::string& path) {
  if (traces_.empty())
    throw Error(DLRT_FAILED_PRECONDITION, "TrainStep::save: the step has not run yet");
  const std::map<std::string, Model::NamedValue> values = read_values(primary());
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
  if (!traces_.empty()) {
    lend_from_models();  // the models' weights are then replaced by the file's
    write_values(values, true, "TrainStep::load: '" + path + "'");
    sync_from_chief();
    for (auto& t : traces_) {
      for (detail::StepOptimizer& o : t->optimizers) {
        o.steps_done = static_cast<int64_t>(t->graph->read_variable<float>(o.iterations).at(0));
        o.written = -1.f;
      }
      t->runner->exe.set_run_count(runs);
    }
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
  for (const auto& [name, v] : primary().variables) {
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
  for (auto& t : traces_)
    for (const auto& [name, v] : t->variables) {
      auto it = values.find(name);
      if (it != values.end()) t->graph->write_variable(v, it->second.values);
    }
}

}  // namespace dlrt::nn

#endif  // DLRT_NN_TRAIN_STEP_HPP_
