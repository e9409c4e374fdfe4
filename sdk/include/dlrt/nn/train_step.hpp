// dlrt/nn/train_step.hpp: custom training steps — what TensorFlow users write with
// tf.GradientTape and a tf.function: their own forward pass, several models, several losses
// and optimizers, compiled once and run many times like fit's step. TrainStep is declared
// here; the Tape its function builds with is in tape.hpp.
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
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/data.hpp"
#include "dlrt/nn/distribute.hpp"
#include "dlrt/nn/model.hpp"
#include "dlrt/nn/progress.hpp"
#include "dlrt/nn/tape.hpp"

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

// The named values a step function returns: f32 scalars are metrics, which run() returns as
// numbers; any other value (a batch of images, logits) is fetched too and read with output().
using StepMetrics = std::vector<std::pair<std::string, Value>>;
using StepFunction = std::function<StepMetrics(Tape&)>;

namespace detail {
struct StepTrace;  // one trace of the step function (libdlrt_nn's nn/step_trace.hpp)
}

class TrainStep : private detail::StateHolder {
 public:
  TrainStep(const Context& ctx, StepFunction fn, StepOptions options = {});
  ~TrainStep();
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
  std::vector<Model::NamedValue> state(size_t replica = 0);

  // Every variable of the step (the models' weights as "<model>/<name>", the optimizers'
  // state) to a safetensors file (atomically, as Model::save_weights), and back: load
  // restores all of them and the run count, now when the step has run, else at the next run
  // (after it has taken the models' weights, which the file's then replace). A GAN stopped
  // after a save and resumed from it makes the uninterrupted run's updates.
  void save(const std::string& path);
  void load(const std::string& path);

  // The compiled executable of the last trace (placement, profiling; under a strategy replica
  // 0's grads executable); FAILED_PRECONDITION before the first run.
  Executable& executable();

 private:
  friend class Tape;
  using Trace = detail::StepTrace;

  // A model the function calls: its plan; each trace holds the step's variables of its layers
  // (Trace::model_vars, indexed as plan->state; invalid for optimizer entries).
  struct Binding {
    Model* model;        // null once the model is recompiled or destroyed (detach)
    std::string prefix;  // "generator/": the step's names of its variables
    std::shared_ptr<const detail::Plan> plan;
  };

  bool mirrored() const { return strategy_ != nullptr; }
  // Whether a model bound to the step computes some layer in f16 (Plan::compute_dtype).
  bool computes_f16() const;
  Trace& primary();
  // The primary trace's variables of binding `k` (empty when the trace does not call it).
  const std::vector<Value>* primary_vars(size_t k);

  // ---- the holder hand-over (model.hpp's StateHolder) ----
  void give_back(Model& model) override;
  void detach(Model& model) override;
  // Takes the weights of every model of this trace that does not lend them to this step now
  // (into every replica's copy).
  void lend_from_models();
  size_t binding_index(Model& model) const;
  // The plan entries a step holds of a model: its layers' variables (no optimizer state).
  static std::vector<size_t> layer_state(const detail::Plan& p);
  static Value make_variable(Trace& t, const std::string& name, const Shape& dims, bool trainable,
                             double init);
  void check_feeds(const std::vector<Feed>& feeds) const;
  void build_trace(const std::vector<Feed>& feeds);
  std::unique_ptr<Trace> trace_replica(const std::vector<Feed>& feeds, size_t replica);
  void compile_trace(Trace& t, const StepMetrics& results);
  void run_replicas(const std::vector<Feed>& feeds);
  void sync_from_chief();
  void write_values(const std::map<std::string, Model::NamedValue>& values, bool complete,
                    const std::string& who);
  static std::map<std::string, Model::NamedValue> read_values(Trace& t);

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

}  // namespace dlrt::nn

#endif  // DLRT_NN_TRAIN_STEP_HPP_
