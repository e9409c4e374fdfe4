// dlrt/nn/session.hpp: one graph holding a model's variables and the executables built over
// them — the training step, and an evaluation and a prediction executable per input type
// (rows and dtypes).
// An implementation part of model.hpp (namespace nn::detail); users go through Sequential.
//
// The training step is one executable of one graph (compiled with run_assigns on):
//   x_data (N,...) u8|f32, y_data (N[,...])   the training set, uploaded once as
//                                              non-trainable variables on the model's device
//                                              ("data/x", "data/y"; a model of several inputs
//                                              or outputs has one per array: "data/x_1", ...)
//   batch_indices (B) i32, valid (B) f32      the only feeds of a step
//   x = gather_rows(x_data, idx) -> cast f32 -> * 1/255 (u8 images)   (per input, same idx)
//   y_pred = the layers; per = loss.per_sample(y_pred, y)
//     (several outputs: per = sum over outputs k of weight_k * per_k, the compiled loss on
//     each output; loss_weights default 1)
//   loss = sum(per * valid) / sum(valid)       the mean over the batch's real rows
//   grads = dlrt_graph_gradients(loss, trainable variables)
//   iterations += 1; optimizer update of every variable, assigned in place
//   layers' non-trainable state (moving statistics) assigned their new values
//   fetches (Plan::results): loss, each output's mean loss (several outputs only), and one
//   count per metric per output (output-major)
// A graph takes one assign per variable, so it holds one training step, built for one batch
// size: the last partial batch of an epoch runs the same executable with its indices padded
// (index 0) and `valid` 0 on the padding, which leaves the loss, the gradients and the counts
// those of the real rows. Training on another set size or batch size builds a new Session
// and moves the state (weights, slots, iterations) over (model.hpp).
//
// Under a distribution strategy (distribute.hpp, replicated.hpp) there is one Session per
// replica, each on its replica's device, and the step is split in two executables of the
// same graph so that the gradients can be summed over every replica in between:
//   grads (run_assigns 0): feeds batch_indices, valid (this replica's rows of the global
//     batch); fetches every gradient of loss_sum = sum(per * valid) (not the mean: replicas
//     hold different numbers of real rows), loss_sum itself and one count per metric
//   apply (run_assigns 1): feeds one placeholder per gradient (the summed gradients) and
//     scale () f32 = 1 / the global batch's real rows; updates every variable with
//     grad * scale, which is the single-device gradient of the mean. The layers' state
//     (moving statistics) goes the same way: grads fetches each new value times the
//     replica's real rows, apply assigns sum * scale, the rows-weighted mean over replicas.
// Evaluation and prediction take host batches through placeholders (one per array), one
// executable per input type (batch size: a full one and the last partial one; and the dtypes
// of every array: u8 images or f32), compiled with run_assigns off: they read the variables
// and change nothing.
#ifndef DLRT_NN_SESSION_HPP_
#define DLRT_NN_SESSION_HPP_

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/activations.hpp"
#include "dlrt/nn/batch_norm.hpp"
#include "dlrt/nn/data.hpp"
#include "dlrt/nn/layers.hpp"
#include "dlrt/nn/loss_scale.hpp"
#include "dlrt/nn/losses.hpp"
#include "dlrt/nn/metrics.hpp"
#include "dlrt/nn/optimizers.hpp"
#include "dlrt/nn/regularizers.hpp"

namespace dlrt::nn::detail {

// One variable of the model's state: a layer parameter, an optimizer slot or the step count.
struct StateVar {
  std::string name;  // "conv2d/kernel", "conv2d/kernel/m", "optimizer/iterations"
  Shape dims;
  Initializer init;
  bool trainable;
  int64_t owner;  // the index of the trainable variable a slot belongs to; -1 otherwise
  Regularizer regularizer = {};  // its penalty joins the loss (weights only)
  // A parameter its layer trains (ParamSpec::trainable): `trainable` is this and the layer's
  // trainable flag at compile(); moving statistics and slots are never weights.
  bool weight = false;
};
// The index Plan::iterations and Plan::learning_rate hold in a plan made without optimizer.
inline constexpr size_t kNoStateVar = static_cast<size_t>(-1);

// One layer call of a model's graph. Values are numbered in "slots": the model's inputs are
// slots 0..I-1, and node k's output is slot I + k. Nodes come in a topological order (every
// input slot is made before the node), so building them in order builds the graph.
struct PlanNode {
  size_t layer;                // index into Plan::layers
  std::vector<size_t> inputs;  // slots this call takes, in order
  size_t call = 0;             // 0 for a layer's first call; 1, 2, ... for a shared layer's next
};

// Everything a Session needs, fixed when the model is compiled (graph-independent). A
// Sequential's plan is the chain node k = layer k on slot k.
struct Plan {
  std::vector<std::shared_ptr<Layer>> layers;  // each once, even when called several times
  Shape input;                                 // inputs[0]: what fit/evaluate/predict feed
  std::vector<Shape> inputs;
  std::vector<PlanNode> nodes;
  std::vector<size_t> outputs;                   // slots; outputs[0] is y_pred
  std::vector<std::vector<size_t>> layer_state;  // per layer: its params' indices in `state`
  std::vector<StateVar> state;
  size_t iterations = 0;     // index of "optimizer/iterations" in `state`
  size_t learning_rate = 0;  // index of "optimizer/learning_rate" in `state`
  // Dynamic loss scaling (a mixed_float16 policy with an optimizer; kNoStateVar otherwise):
  // the indices of "optimizer/loss_scale" and "optimizer/loss_scale_good_steps" (LossScale).
  size_t loss_scale = static_cast<size_t>(-1);
  size_t loss_scale_good_steps = static_cast<size_t>(-1);
  std::shared_ptr<const Optimizer> optimizer;
  std::shared_ptr<const Loss> loss;  // applied to every output
  // Per output: the weight of its loss in the loss that trains (CompileConfig::loss_weights);
  // empty = 1 for every output.
  std::vector<float> loss_weights;
  std::vector<std::shared_ptr<const Metric>> metrics;  // each computed on every output
  uint64_t seed = 0;
  // Per layer: the dtype its call computes in (mixed_precision.hpp); empty = f32 everywhere.
  std::vector<dlrt_dtype> compute_dtype;
  std::vector<std::string> device_scopes;  // pushed, outermost first, around every build
  // Inference only (evaluate, predict; CompileConfig::fold_batch_norm): fold_bn[j] >= 0 says
  // node j, a BatchNormalization, runs folded into node fold_bn[j], the linear Conv2D that
  // is its only input and has no other reader (Conv2D::call_scaled). Empty: nothing folds.
  std::vector<int64_t> fold_bn;
  // fuse_bn_relu[j] != 0: node j, a BatchNormalization, builds its op with the ReLU fused
  // (BatchNormalization::call_with_relu), and the one ReLU node reading it passes the value
  // on (CompileConfig::fuse_batch_norm_relu). Empty: nothing fuses.
  std::vector<char> fuse_bn_relu;
  // Residual tails (CompileConfig::fuse_batch_norm_add_relu), training steps only:
  // fuse_bn_add_relu[k] = j >= 0 says node k, an Add of two inputs, builds BatchNormalization
  // node j (one of its inputs, read by nothing else) with the Add's other input and the ReLU
  // after it as one op (BatchNormalization::call_with_add_relu), and the one ReLU node reading
  // the Add passes the value on; fuse_bn_add_relu[j] = kBuiltByItsAdd marks node j, which then
  // builds nothing itself. Empty: nothing fuses.
  static constexpr int64_t kBuiltByItsAdd = -2;
  std::vector<int64_t> fuse_bn_add_relu;
  dlrt::CompileOptions compile;

  float loss_weight(size_t output) const {
    return loss_weights.empty() ? 1.f : loss_weights.at(output);
  }
  // How many of a step's results are losses: the total, then one per output when there are
  // several. The metric counts follow, metrics.size() per output, output-major.
  size_t loss_results() const { return outputs.size() > 1 ? 1 + outputs.size() : 1; }
  size_t results() const { return loss_results() + metrics.size() * outputs.size(); }
  // Whether anything reads model input `input` (slot `input`): a model may have inputs its
  // outputs do not need, which evaluation and prediction then do not feed (compile would
  // prune their placeholders).
  bool input_used(size_t input) const {
    for (const PlanNode& n : nodes)
      if (std::find(n.inputs.begin(), n.inputs.end(), input) != n.inputs.end()) return true;
    return std::find(outputs.begin(), outputs.end(), input) != outputs.end();
  }
};

// Host arrays as the data path takes them: one per model input (x) or output (y), in order.
using ArrayRefs = std::vector<const Array*>;

// "x" for a model's only array of a kind, "x_1" (and "x" for the first) for its others: the
// names of the data variables and placeholders, so a model of one input builds what it did
// before several were taken.
inline std::string indexed_name(const std::string& base, size_t i) {
  return i == 0 ? base : base + "_" + std::to_string(i);
}

// The number of ids the model's input `input` (slot `input`) takes when every layer reading it
// takes integer ids (Embedding: Layer::input_ids), the smallest of them; 0 when the input is
// float features.
inline int64_t model_input_ids(const Plan& p, size_t input = 0) {
  int64_t ids = 0;
  for (const PlanNode& n : p.nodes)
    for (size_t s : n.inputs) {
      if (s != input) continue;
      const int64_t k = p.layers.at(n.layer)->input_ids();
      if (k == 0) return 0;
      ids = ids == 0 ? k : std::min(ids, k);
    }
  return ids;
}

// The model's outputs (every Plan::outputs slot, in order) on `inputs` (one per plan input):
// every node in order, each on its input slots, with the variables `vars` (indexed as
// Plan::state; only the layers' entries are read). A shared layer's later calls get their
// own node-name scope ("train/call_1/") and seed (so a shared Dropout draws another mask),
// and the same variables. Sessions and custom steps (train_step.hpp) build through this.
// Under a mixed-precision policy (Plan::compute_dtype) each call's float inputs and weights
// are cast to its layer's compute dtype first, and the model's float outputs back to f32.
inline bool is_float_dtype(dlrt_dtype d) {
  return d == DLRT_F32 || d == DLRT_F16 || d == DLRT_BF16;
}
inline Value cast_float_to(Graph& g, Value v, dlrt_dtype to) {
  if (!is_float_dtype(v.dtype()) || v.dtype() == to) return v;
  return g.op1("cast", {v}, {{"dtype", to}});
}

// Whether `layer` is a plain ReLU: nn::ReLU() or nn::Activation("relu") (what a
// BatchNormalization fuses, Plan::fuse_bn_relu).
inline bool is_relu_layer(const Layer& layer) {
  if (const auto* a = dynamic_cast<const ActivationLayer*>(&layer)) return a->activation() == "relu";
  if (const auto* a = dynamic_cast<const Activation*>(&layer)) return a->activation() == "relu";
  return false;
}

inline std::vector<Value> run_plan(const Plan& plan, CallContext& c, std::vector<Value> inputs,
                                   const std::vector<Value>& vars) {
  std::vector<Value> slots = std::move(inputs);
  // Slots a BatchNormalization made with its ReLU fused (Plan::fuse_bn_relu): the ReLU node
  // reading one passes it on. A folded BatchNormalization (below) fuses nothing.
  std::vector<char> relu_done(slots.size() + plan.nodes.size(), 0);
  const bool mixed = !plan.compute_dtype.empty();
  const bool add_relu = c.training && !plan.fuse_bn_add_relu.empty();
  for (size_t j = 0; j < plan.nodes.size(); ++j) {
    const PlanNode& n = plan.nodes[j];
    if (n.inputs.size() == 1 && relu_done[n.inputs[0]] && is_relu_layer(*plan.layers[n.layer])) {
      slots.push_back(slots.at(n.inputs[0]));
      continue;
    }
    if (add_relu && plan.fuse_bn_add_relu[j] == Plan::kBuiltByItsAdd) {
      // Its Add builds it; only that Add reads this slot, and skips it.
      slots.push_back(slots.at(n.inputs.at(0)));
      continue;
    }
    if (add_relu && plan.fuse_bn_add_relu[j] >= 0) {
      // The residual tail: BatchNormalization node b on its input, plus this Add's other input,
      // plus the ReLU after it, built in node b's call context (its node names and seed).
      const size_t b = static_cast<size_t>(plan.fuse_bn_add_relu[j]);
      const PlanNode& bn_node = plan.nodes[b];
      const size_t bn_slot = plan.inputs.size() + b;
      const size_t shortcut = n.inputs.at(0) == bn_slot ? n.inputs.at(1) : n.inputs.at(0);
      std::vector<Value> params;
      for (size_t i : plan.layer_state[bn_node.layer]) params.push_back(vars.at(i));
      const auto& bn = static_cast<const BatchNormalization&>(*plan.layers[bn_node.layer]);
      relu_done[slots.size()] = 1;
      const Value x = slots.at(bn_node.inputs.at(0)), r = slots.at(shortcut);
      if (bn_node.call == 0) {
        slots.push_back(bn.call_with_add_relu(c, x, r, params));
      } else {
        const std::string k = std::to_string(bn_node.call);
        CallContext again{c.graph, c.training, derive_seed(c.seed, "call/" + k),
                          c.scope + "call_" + k + "/"};
        slots.push_back(bn.call_with_add_relu(again, x, r, params));
      }
      continue;
    }
    if (!c.training && c.fold_batch_norm && !plan.fold_bn.empty() && plan.fold_bn[j] >= 0) {
      // The conv node's own output (built above) is left unread: compile prunes it.
      const PlanNode& conv = plan.nodes[static_cast<size_t>(plan.fold_bn[j])];
      std::vector<Value> conv_params, bn_params;
      for (size_t i : plan.layer_state[conv.layer]) conv_params.push_back(vars.at(i));
      for (size_t i : plan.layer_state[n.layer]) bn_params.push_back(vars.at(i));
      const auto& bn = static_cast<const BatchNormalization&>(*plan.layers[n.layer]);
      const auto [scale, shift] = bn.inference_scale_shift(c, bn_params);
      const auto& layer = static_cast<const Conv2D&>(*plan.layers[conv.layer]);
      slots.push_back(
          layer.call_scaled(c, slots.at(conv.inputs.at(0)), conv_params, scale, shift));
      continue;
    }
    std::vector<Value> params, in;
    for (size_t i : plan.layer_state[n.layer]) params.push_back(vars.at(i));
    for (size_t s : n.inputs) in.push_back(slots.at(s));
    if (mixed) {
      const dlrt_dtype to = plan.compute_dtype.at(n.layer);
      for (Value& v : in) v = cast_float_to(c.graph, v, to);
      for (Value& v : params) v = cast_float_to(c.graph, v, to);
    }
    if (!plan.fuse_bn_relu.empty() && plan.fuse_bn_relu[j]) {
      // As call_multi below, the ReLU fused.
      const auto& bn = static_cast<const BatchNormalization&>(*plan.layers[n.layer]);
      relu_done[slots.size()] = 1;
      if (n.call == 0) {
        slots.push_back(bn.call_with_relu(c, in.at(0), params));
      } else {
        const std::string k = std::to_string(n.call);
        CallContext again{c.graph, c.training, derive_seed(c.seed, "call/" + k),
                          c.scope + "call_" + k + "/"};
        slots.push_back(bn.call_with_relu(again, in.at(0), params));
      }
      continue;
    }
    if (n.call == 0) {
      slots.push_back(plan.layers[n.layer]->call_multi(c, in, params));
    } else {
      const std::string k = std::to_string(n.call);
      CallContext again{c.graph, c.training, derive_seed(c.seed, "call/" + k),
                        c.scope + "call_" + k + "/"};
      slots.push_back(plan.layers[n.layer]->call_multi(again, in, params));
    }
  }
  std::vector<Value> out;
  for (size_t s : plan.outputs)
    out.push_back(mixed ? cast_float_to(c.graph, slots.at(s), DLRT_F32) : slots.at(s));
  return out;
}

// Pushes a Plan's device scopes for as long as it lives.
class Scopes {
 public:
  Scopes(Graph& g, const std::vector<std::string>& specs) {
    for (const std::string& s : specs) scopes_.push_back(std::make_unique<dlrt::DeviceScope>(g, s));
  }
  ~Scopes() {
    while (!scopes_.empty()) scopes_.pop_back();  // innermost first
  }

 private:
  std::vector<std::unique_ptr<dlrt::DeviceScope>> scopes_;
};

// An executable with its feed tensors (made on the device each placeholder was placed on, so
// a run copies nothing in) and fetch tensors (made by the first run, reused after).
struct Runner {
  Executable exe;
  std::vector<Tensor> feeds;
  std::vector<Tensor> fetches;

  Runner(const Context& ctx, Graph& g, const std::vector<Value>& placeholders,
         const std::vector<std::string>& names, const std::vector<Value>& outputs,
         const dlrt::CompileOptions& options)
      : exe(g.compile(placeholders, outputs, options)), fetches(outputs.size()) {
    make_feeds(ctx, placeholders, names);
  }

  void make_feeds(const Context& ctx, const std::vector<Value>& placeholders,
                  const std::vector<std::string>& names) {
    for (size_t i = 0; i < placeholders.size(); ++i) {
      size_t device = 0;
      bool found = false;
      for (size_t n = 0; n < exe.node_count() && !found; ++n) {
        const NodePlacement p = exe.node_placement(n);
        if (p.name == names[i]) {
          device = ctx.find_device(p.assigned);
          found = true;
        }
      }
      if (!found) throw Error(DLRT_INTERNAL, "nn: placeholder '" + names[i] + "' was not placed");
      feeds.push_back(Tensor::create(ctx, device, placeholders[i].dtype(), placeholders[i].dims()));
    }
  }
  void run() {
    std::vector<const Tensor*> in;
    for (const Tensor& t : feeds) in.push_back(&t);
    exe.run(in, fetches);
  }
  float scalar(size_t fetch) const { return fetches.at(fetch).read<float>().at(0); }
};

class Session {
 public:
  // Makes the graph and every state variable (named as in the plan, under its device scopes).
  // `replica` (the global replica index, 0 without a strategy) salts the training seed of
  // random layers (Dropout) so that replicas draw different masks; replica 0 draws what a
  // single device would.
  Session(const Context& ctx, std::shared_ptr<const Plan> plan, uint64_t replica = 0)
      : ctx_(ctx), plan_(std::move(plan)), graph_(ctx), replica_(replica) {
    Scopes scopes(graph_, plan_->device_scopes);
    for (const StateVar& s : plan_->state) {
      const uint64_t seed = derive_seed(plan_->seed, s.name);
      auto [op, attrs] = s.init.init_op(s.dims, seed);
      vars_.push_back(graph_.variable(s.name, DLRT_F32, s.dims, op, attrs, s.trainable));
      // orthogonal, lstm_unit_forget_bias: computed here (initializers.hpp), written over
      // the init op's zeros
      if (s.init.on_host()) graph_.write_variable(vars_.back(), s.init.host_values(s.dims, seed));
    }
  }

  Graph& graph() { return graph_; }
  const std::vector<Value>& vars() const { return vars_; }
  const Plan& plan() const { return *plan_; }

  // ---- training ----
  bool has_train() const { return train_ != nullptr; }
  // Whether the step built fits a training set of `rows` rows of these arrays (one per
  // input, one per output) in batches of `batch`.
  bool train_fits(int64_t rows, int64_t batch, const ArrayRefs& xs, const ArrayRefs& ys) const {
    return (train_ || grads_) && rows_ == rows && batch_ == batch && x_dtypes_ == dtypes(xs) &&
           y_dtypes_ == dtypes(ys) && y_shapes_ == sample_shapes(ys);
  }
  void build_train(const ArrayRefs& xs, const ArrayRefs& ys, int64_t batch) {
    Graph& g = graph_;
    Scopes scopes(g, plan_->device_scopes);
    make_data(xs, ys, batch);
    Value idx = g.placeholder("train/batch_indices", DLRT_I32, {batch});
    Value valid = g.placeholder("train/valid", DLRT_F32, {batch});
    std::vector<StateUpdate> state_updates;  // moving statistics (BatchNormalization)
    CallContext c{g, true, train_seed(), "train/", &state_updates};
    const std::vector<Value> y_pred = forward(c, gathered_inputs(g, idx));
    for (const StateUpdate& u : state_updates) g.assign(u.variable, u.value);
    const std::vector<Value> y_true = gathered_targets(g, idx);
    const std::vector<Value> per_output = per_sample_losses(g, y_pred, y_true);
    Value per = weighted_sum(g, per_output);
    // The mean over the real rows, plus the weights' penalty when there is one; the node
    // named "train/loss" is the loss either way.
    Value penalty = regularization(g);
    Value loss = g.op1(
        "div", {g.op1("reduce_sum", {g.op1("mul", {per, valid})}), g.op1("reduce_sum", {valid})},
        {}, penalty ? "" : "train/loss");
    if (penalty) loss = g.op1("add", {loss, penalty}, {}, "train/loss");

    const std::vector<size_t> trainable = trainable_vars();
    Value counter = vars_[plan_->iterations];
    Value one = g.constant<float>("", {}, {1.f});
    if (plan_->loss_scale == kNoStateVar) {
      const std::vector<Value> grads = gradients(loss, trainable);
      Value step = g.op1("add", {counter, one}, {}, "train/step");
      g.assign(counter, step);
      apply_updates(g, trainable, grads, step);
    } else {
      // Dynamic loss scaling (loss_scale.hpp): a step whose gradients are not all finite
      // changes nothing but the scale.
      Value scale = vars_[plan_->loss_scale], finite;
      std::vector<Value> grads = scaled_gradients(
          g, loss, scale, [&](Value scaled) { return gradients(scaled, trainable); }, &finite);
      Value step = g.op1("add", {counter, one}, {}, "train/step");
      g.assign(counter, g.op1("where", {finite, step, counter}));
      apply_updates(g, trainable, grads, step, finite);
      update_loss_scale(g, scale, vars_[plan_->loss_scale_good_steps], finite);
    }
    std::vector<Value> fetches = {loss};
    if (per_output.size() > 1)  // each output's mean loss, for the logs
      for (const Value& p : per_output)
        fetches.push_back(g.op1("div", {g.op1("reduce_sum", {g.op1("mul", {p, valid})}),
                                        g.op1("reduce_sum", {valid})}));
    add_metric_counts(g, y_pred, y_true, valid, &fetches);

    dlrt::CompileOptions o = plan_->compile;
    o.run_assigns = true;
    train_ = std::make_unique<Runner>(
        ctx_, g, std::vector<Value>{idx, valid},
        std::vector<std::string>{"train/batch_indices", "train/valid"}, fetches, o);
  }
  // Uploads the training set (once per fit) into the data variables: every x, then every y.
  void upload(const ArrayRefs& xs, const ArrayRefs& ys) {
    for (size_t i = 0; i < xs.size(); ++i)
      check(dlrt_graph_variable_write(graph_.get(), x_data_.at(i).get(), xs[i]->data(),
                                      xs[i]->bytes().size()));
    for (size_t k = 0; k < ys.size(); ++k)
      check(dlrt_graph_variable_write(graph_.get(), y_data_.at(k).get(), ys[k]->data(),
                                      ys[k]->bytes().size()));
  }
  int64_t batch() const { return batch_; }
  // One step on rows `indices` (at most batch() of them) of every array. Returns the
  // plan's results: {loss, [per-output losses], counts...}.
  std::vector<double> train_step(const int32_t* indices, int64_t count) {
    feed_batch(*train_, indices, count);
    train_->run();
    std::vector<double> out;
    for (size_t f = 0; f < train_->fetches.size(); ++f) out.push_back(train_->scalar(f));
    return out;
  }
  Executable& train_executable() { return train_->exe; }

  // ---- the split step of a replica (see the top of this file) ----
  bool has_split() const { return grads_ != nullptr; }
  void build_split(const ArrayRefs& xs, const ArrayRefs& ys, int64_t batch) {
    if (plan_->loss_scale != kNoStateVar)
      throw Error(DLRT_UNIMPLEMENTED,
                  "fit under a distribution strategy with the mixed_float16 policy: dynamic "
                  "loss scaling is built for one device only; use mixed_bfloat16 (no scaling "
                  "needed) or one device");
    Graph& g = graph_;
    Scopes scopes(g, plan_->device_scopes);
    make_data(xs, ys, batch);
    Value idx = g.placeholder("grads/batch_indices", DLRT_I32, {batch});
    Value valid = g.placeholder("grads/valid", DLRT_F32, {batch});
    std::vector<StateUpdate> state_updates;  // moving statistics (BatchNormalization)
    CallContext c{g, true, train_seed(), "grads/", &state_updates};
    const std::vector<Value> y_pred = forward(c, gathered_inputs(g, idx));
    const std::vector<Value> y_true = gathered_targets(g, idx);
    const std::vector<Value> per_output = per_sample_losses(g, y_pred, y_true);
    Value per = weighted_sum(g, per_output);
    // The penalty once per global batch: each replica adds penalty * its real rows, and the
    // sum over replicas times scale (1 / all real rows) is the penalty.
    Value penalty = regularization(g);
    Value loss_sum =
        g.op1("reduce_sum", {g.op1("mul", {per, valid})}, {}, penalty ? "" : "grads/loss_sum");
    if (penalty)
      loss_sum = g.op1("add", {loss_sum, g.op1("mul", {penalty, g.op1("reduce_sum", {valid})})}, {},
                       "grads/loss_sum");

    const std::vector<size_t> trainable = trainable_vars();
    std::vector<Value> fetches = gradients(loss_sum, trainable);
    // Each state update's new value times this replica's real rows: summed over the
    // replicas and scaled by 1 / all real rows in apply, the rows-weighted mean of what each
    // replica computed (Keras' MirroredVariable with MEAN aggregation when the replicas hold
    // equal shares; a replica without real rows adds nothing).
    Value rows = g.op1("reduce_sum", {valid});
    for (const StateUpdate& u : state_updates) fetches.push_back(g.op1("mul", {u.value, rows}));
    fetches.push_back(loss_sum);
    if (per_output.size() > 1)  // each output's loss sum, for the logs
      for (const Value& p : per_output)
        fetches.push_back(g.op1("reduce_sum", {g.op1("mul", {p, valid})}));
    add_metric_counts(g, y_pred, y_true, valid, &fetches);
    dlrt::CompileOptions o = plan_->compile;
    o.run_assigns = false;
    grads_ = std::make_unique<Runner>(
        ctx_, g, std::vector<Value>{idx, valid},
        std::vector<std::string>{"grads/batch_indices", "grads/valid"}, fetches, o);

    // apply: the summed gradients (and state sums) in, every variable updated in place.
    std::vector<Value> feeds;
    std::vector<std::string> names;
    for (size_t k = 0; k < trainable.size(); ++k) {
      names.push_back("apply/grad_" + std::to_string(k));
      feeds.push_back(g.placeholder(names.back(), DLRT_F32, vars_[trainable[k]].dims()));
    }
    for (size_t k = 0; k < state_updates.size(); ++k) {
      names.push_back("apply/state_" + std::to_string(k));
      feeds.push_back(g.placeholder(names.back(), DLRT_F32, state_updates[k].variable.dims()));
    }
    names.push_back("apply/scale");
    feeds.push_back(g.placeholder(names.back(), DLRT_F32, {}));
    Value counter = vars_[plan_->iterations];
    Value step = g.op1("add", {counter, g.constant<float>("", {}, {1.f})}, {}, "apply/step");
    g.assign(counter, step);
    std::vector<Value> grads;
    for (size_t k = 0; k < trainable.size(); ++k)
      grads.push_back(g.op1("mul", {feeds[k], feeds.back()}));
    apply_updates(g, trainable, grads, step);
    for (size_t k = 0; k < state_updates.size(); ++k)
      g.assign(state_updates[k].variable,
               g.op1("mul", {feeds[trainable.size() + k], feeds.back()}));
    o.run_assigns = true;
    apply_ = std::make_unique<Runner>(ctx_, g, feeds, names, std::vector<Value>{step}, o);
  }
  // Runs the grads executable on this replica's rows `indices` (at most batch(); none is
  // fine: the replica then contributes zeros). Its fetches (split_sums) hold the results.
  void split_grads(const int32_t* indices, int64_t count) {
    feed_batch(*grads_, indices, count);
    grads_->run();
  }
  // The grads executable's fetches, in order: every gradient, each state update's value
  // times the replica's real rows, loss_sum, each output's loss sum (several outputs only),
  // the metric counts. The strategy sums them over replicas in place; then split_apply reads
  // the gradients and the state sums.
  std::vector<Tensor>& split_sums() { return grads_->fetches; }
  // Applies the summed gradients times `scale` (1 / the global batch's real rows).
  void split_apply(float scale) {
    const size_t n = apply_->feeds.size() - 1;
    apply_->feeds[n].write(std::vector<float>{scale});
    std::vector<const Tensor*> in;
    for (size_t k = 0; k < n; ++k) in.push_back(&grads_->fetches[k]);
    in.push_back(&apply_->feeds[n]);
    apply_->exe.run(in, apply_->fetches);
  }
  Executable& grads_executable() { return grads_->exe; }
  Executable& apply_executable() { return apply_->exe; }

  // ---- evaluation and prediction: per batch size and dtypes ----
  // {sum of per-sample losses, [each output's sum], counts...} over `count` rows of every x
  // and y from `first`.
  std::vector<double> eval_batch(const ArrayRefs& xs, const ArrayRefs& ys, int64_t first,
                                 int64_t count) {
    Runner& r = eval_runner(xs, ys, count);
    size_t next = 0;  // the feeds: every used x, then every y
    for (size_t i = 0; i < xs.size(); ++i)
      if (plan_->input_used(i)) write_rows(r.feeds[next++], *xs[i], first, count);
    for (const Array* y : ys) write_rows(r.feeds[next++], *y, first, count);
    r.run();
    std::vector<double> out;
    for (size_t f = 0; f < r.fetches.size(); ++f) out.push_back(r.scalar(f));
    return out;
  }
  // Every output's y_pred of `count` rows of every x from `first`, as f32 bytes (one per
  // output).
  std::vector<std::vector<uint8_t>> predict_batch(const ArrayRefs& xs, int64_t first,
                                                  int64_t count) {
    // One executable per input type: the batch size and the dtypes (u8 images, f32 features).
    auto& slot = predicts_[{count, dtypes(xs)}];
    if (!slot) {
      Graph& g = graph_;
      Scopes scopes(g, plan_->device_scopes);
      const std::string scope = "predict_" + std::to_string(count) + "_" + dtypes_name(xs) + "/";
      std::vector<Value> xp, in;
      std::vector<std::string> names;
      for (size_t i = 0; i < xs.size(); ++i) {
        if (!plan_->input_used(i)) {  // no placeholder; run_plan never reads the slot
          in.emplace_back();
          continue;
        }
        names.push_back(scope + indexed_name("x", i));
        xp.push_back(
            g.placeholder(names.back(), xs[i]->dtype(), batch_dims(count, xs[i]->sample_shape())));
        in.push_back(to_float(g, xp.back(), i));
      }
      CallContext c{g, false, plan_->seed, scope};
      const std::vector<Value> y_pred = forward(c, in);
      dlrt::CompileOptions o = plan_->compile;
      o.run_assigns = false;
      slot = std::make_unique<Runner>(ctx_, g, xp, names, y_pred, o);
    }
    size_t next = 0;  // a feed per used x
    for (size_t i = 0; i < xs.size(); ++i)
      if (plan_->input_used(i)) write_rows(slot->feeds[next++], *xs[i], first, count);
    slot->run();
    std::vector<std::vector<uint8_t>> out;
    for (const Tensor& t : slot->fetches) out.push_back(t.read<uint8_t>());
    return out;
  }

  // The prediction of one row of `input_dtype`, written as ONNX (dlrt_graph_export_onnx) with
  // a symbolic batch dim. The piece of graph is built once per dtype, as predict's are.
  void save_onnx(const std::string& path, dlrt_dtype input_dtype) {
    auto it = exports_.find(input_dtype);
    if (it == exports_.end()) {
      Graph& g = graph_;
      Scopes scopes(g, plan_->device_scopes);
      const std::string scope = std::string("onnx_") + dtype_name(input_dtype) + "/";
      Value xp = g.placeholder(scope + "x", input_dtype, batch_dims(1, plan_->input));
      CallContext c{g, false, plan_->seed, scope};
      c.fold_batch_norm = false;  // ONNX's BatchNormalization, which importers fold themselves
      Value y = forward(c, {to_float(g, xp, 0)}).at(0);
      it = exports_.emplace(input_dtype, std::make_pair(xp, y)).first;
    }
    const dlrt_value in = it->second.first.get(), out = it->second.second.get();
    const char* in_name = "input";
    const char* out_name = "output";
    check(dlrt_graph_export_onnx(graph_.get(), &in, &in_name, 1, &out, &out_name, 1, 1,
                                 path.c_str()));
  }

 private:
  // The optimizer's updates of the trainable variables vars_[trainable[k]] by grads[k]
  // (clipped together by global norm when the optimizer says so).
  // Under loss scaling, `apply_if` (bool scalar) says whether the step's updates happen.
  void apply_updates(Graph& g, const std::vector<size_t>& trainable,
                     const std::vector<Value>& grads, Value step, Value apply_if = {}) {
    std::vector<Value> params;
    std::vector<std::vector<Value>> slots;
    for (size_t k : trainable) {
      params.push_back(vars_[k]);
      slots.push_back(slots_of(k));
    }
    plan_->optimizer->apply_all(g, params, grads, slots, step, vars_[plan_->learning_rate],
                                apply_if);
  }
  // Indices of the trainable variables in vars_, and their gradients of `loss` (same order).
  std::vector<size_t> trainable_vars() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < vars_.size(); ++i)
      if (plan_->state[i].trainable) out.push_back(i);
    return out;
  }
  std::vector<Value> gradients(const Value& loss, const std::vector<size_t>& wrt_vars) {
    std::vector<dlrt_value> wrt;
    for (size_t i : wrt_vars) wrt.push_back(vars_[i].get());
    std::vector<dlrt_value> grads(wrt.size(), DLRT_INVALID_VALUE);
    check(dlrt_graph_gradients(graph_.get(), loss.get(), wrt.data(), wrt.size(), grads.data()));
    std::vector<Value> out;
    for (dlrt_value v : grads) out.push_back(Value(graph_.get(), v));
    return out;
  }
  // The optimizer slots of variable `var` (Adam's m and v), in plan order.
  std::vector<Value> slots_of(size_t var) const {
    std::vector<Value> slots;
    for (size_t i = 0; i < plan_->state.size(); ++i)
      if (plan_->state[i].owner == static_cast<int64_t>(var)) slots.push_back(vars_[i]);
    return slots;
  }
  // A step's feeds 0 and 1: `count` row indices padded with row 0 to the batch, and `valid`
  // 1 on the real rows, 0 on the padding.
  void feed_batch(Runner& r, const int32_t* indices, int64_t count) {
    std::vector<int32_t> idx(static_cast<size_t>(batch_), 0);
    std::vector<float> valid(static_cast<size_t>(batch_), 0.f);
    for (int64_t i = 0; i < count; ++i) {
      idx[static_cast<size_t>(i)] = indices[i];
      valid[static_cast<size_t>(i)] = 1.f;
    }
    r.feeds[0].write(idx);
    r.feeds[1].write(valid);
  }
  // The training set's variables (one per array: "data/x", "data/x_1", ..., "data/y", ...),
  // and what train_fits compares.
  void make_data(const ArrayRefs& xs, const ArrayRefs& ys, int64_t batch) {
    rows_ = xs.at(0)->rows();
    batch_ = batch;
    x_dtypes_ = dtypes(xs);
    y_dtypes_ = dtypes(ys);
    y_shapes_ = sample_shapes(ys);
    x_data_.clear();
    y_data_.clear();
    for (size_t i = 0; i < xs.size(); ++i)
      x_data_.push_back(graph_.variable(indexed_name("data/x", i), xs[i]->dtype(), xs[i]->dims(),
                                        "fill", {}, false));
    for (size_t k = 0; k < ys.size(); ++k)
      y_data_.push_back(graph_.variable(indexed_name("data/y", k), ys[k]->dtype(), ys[k]->dims(),
                                        "fill", {}, false));
  }
  // The model's inputs of the training set's rows `idx` (as floats where they are), and the
  // targets of the same rows as the loss wants them: one permutation for every array.
  std::vector<Value> gathered_inputs(Graph& g, Value idx) const {
    std::vector<Value> out;
    for (size_t i = 0; i < x_data_.size(); ++i)
      out.push_back(to_float(g, g.op1("gather_rows", {x_data_[i], idx}), i));
    return out;
  }
  std::vector<Value> gathered_targets(Graph& g, Value idx) const {
    std::vector<Value> out;
    for (const Value& y : y_data_)
      out.push_back(plan_->loss->prepare_targets(g, g.op1("gather_rows", {y, idx})));
    return out;
  }
  // The compiled loss per sample on each output (B each).
  std::vector<Value> per_sample_losses(Graph& g, const std::vector<Value>& y_pred,
                                       const std::vector<Value>& y_true) const {
    std::vector<Value> out;
    for (size_t k = 0; k < y_pred.size(); ++k)
      out.push_back(plan_->loss->per_sample(g, y_pred[k], y_true.at(k)));
    return out;
  }
  // sum_k loss_weight(k) * per_output[k]: the per-sample loss that trains (Keras sums the
  // outputs' losses). One output of weight 1 is its loss itself (no op added).
  Value weighted_sum(Graph& g, const std::vector<Value>& per_output) const {
    Value total;
    for (size_t k = 0; k < per_output.size(); ++k) {
      Value p = per_output[k];
      const float w = plan_->loss_weight(k);
      if (w != 1.f) p = g.op1("mul", {p, g.constant<float>("", {}, {w})});
      total = total ? g.op1("add", {total, p}) : p;
    }
    return total;
  }
  // One count per metric per output (output-major), appended to `fetches`.
  void add_metric_counts(Graph& g, const std::vector<Value>& y_pred,
                         const std::vector<Value>& y_true, Value valid,
                         std::vector<Value>* fetches) const {
    for (size_t k = 0; k < y_pred.size(); ++k)
      for (const auto& m : plan_->metrics)
        fetches->push_back(m->count(g, y_pred[k], y_true.at(k), valid));
  }
  static std::vector<dlrt_dtype> dtypes(const ArrayRefs& a) {
    std::vector<dlrt_dtype> out;
    for (const Array* x : a) out.push_back(x->dtype());
    return out;
  }
  static std::vector<Shape> sample_shapes(const ArrayRefs& a) {
    std::vector<Shape> out;
    for (const Array* x : a) out.push_back(x->sample_shape());
    return out;
  }
  // "u8" for one array, "u8_f32" for two: the dtypes part of an executable's node scope.
  static std::string dtypes_name(const ArrayRefs& a) {
    std::string out;
    for (const Array* x : a) out += (out.empty() ? "" : "_") + dtype_name(x->dtype());
    return out;
  }
  uint64_t train_seed() const {
    return replica_ == 0 ? plan_->seed
                         : derive_seed(plan_->seed, "replica/" + std::to_string(replica_));
  }
  static std::vector<int64_t> batch_dims(int64_t b, const Shape& sample) {
    std::vector<int64_t> d = {b};
    d.insert(d.end(), sample.begin(), sample.end());
    return d;
  }
  static void write_rows(Tensor& t, const Array& a, int64_t first, int64_t count) {
    const size_t rb = a.row_bytes();
    check(dlrt_tensor_write(t.get(), a.data() + static_cast<size_t>(first) * rb,
                            static_cast<size_t>(count) * rb));
  }
  // Model input `input`: u8 images become f32 in [0, 1]; f32 passes; other integers are cast —
  // except i32/i64 ids of an input whose layers take ids (Embedding), which pass unchanged.
  Value to_float(Graph& g, Value raw, size_t input) const {
    if (raw.dtype() == DLRT_F32) return raw;
    if ((raw.dtype() == DLRT_I32 || raw.dtype() == DLRT_I64) && model_input_ids(*plan_, input) > 0)
      return raw;
    Value f = g.op1("cast", {raw}, {{"dtype", DLRT_F32}});
    if (raw.dtype() != DLRT_U8) return f;
    return g.op1("mul", {f, g.constant<float>("", {}, {1.f / 255.f})});
  }
  // Every output (Plan::outputs) of the model on its inputs x (run_plan).
  std::vector<Value> forward(CallContext& c, std::vector<Value> x) {
    return run_plan(*plan_, c, std::move(x), vars_);
  }
  // The sum of every weight's regularization penalty; an invalid Value when there is none.
  Value regularization(Graph& g) {
    Value total;
    for (size_t i = 0; i < plan_->state.size(); ++i) {
      if (!plan_->state[i].regularizer.active()) continue;
      Value p = plan_->state[i].regularizer.penalty(g, vars_[i]);
      total = total ? g.op1("add", {total, p}) : p;
    }
    return total;
  }
  Runner& eval_runner(const ArrayRefs& xs, const ArrayRefs& ys, int64_t count) {
    auto& slot = evals_[{count, dtypes(xs), dtypes(ys)}];
    if (slot) return *slot;
    Graph& g = graph_;
    Scopes scopes(g, plan_->device_scopes);
    const std::string scope =
        "eval_" + std::to_string(count) + "_" + dtypes_name(xs) + "_" + dtypes_name(ys) + "/";
    // Feeds: every x an output needs (an unused input gets none), then every y.
    std::vector<Value> feeds, in, targets;
    std::vector<std::string> names;
    auto feed = [&](const std::string& name, const Array& a) {
      names.push_back(scope + name);
      feeds.push_back(g.placeholder(names.back(), a.dtype(), batch_dims(count, a.sample_shape())));
      return feeds.back();
    };
    for (size_t i = 0; i < xs.size(); ++i)
      in.push_back(plan_->input_used(i) ? feed(indexed_name("x", i), *xs[i]) : Value());
    for (size_t k = 0; k < ys.size(); ++k) targets.push_back(feed(indexed_name("y", k), *ys[k]));
    for (size_t i = 0; i < xs.size(); ++i)
      if (in[i]) in[i] = to_float(g, in[i], i);
    CallContext c{g, false, plan_->seed, scope};
    const std::vector<Value> y_pred = forward(c, in);
    for (Value& t : targets) t = plan_->loss->prepare_targets(g, t);
    const std::vector<Value> per_output = per_sample_losses(g, y_pred, targets);
    // The reported loss includes the weight penalty (Keras adds model.losses): the sum over
    // the batch gets penalty * count, so the mean over the set gets the penalty once.
    Value loss_sum = g.op1("reduce_sum", {weighted_sum(g, per_output)});
    Value penalty = regularization(g);
    if (penalty)
      loss_sum = g.op1(
          "add", {loss_sum,
                  g.op1("mul", {penalty, g.constant<float>("", {}, {static_cast<float>(count)})})});
    std::vector<Value> fetches = {loss_sum};
    if (per_output.size() > 1)
      for (const Value& p : per_output) fetches.push_back(g.op1("reduce_sum", {p}));
    add_metric_counts(g, y_pred, targets, Value(), &fetches);
    dlrt::CompileOptions o = plan_->compile;
    o.run_assigns = false;
    slot = std::make_unique<Runner>(ctx_, g, feeds, names, fetches, o);
    return *slot;
  }

  const Context& ctx_;
  std::shared_ptr<const Plan> plan_;
  Graph graph_;
  std::vector<Value> vars_;
  // Executables before the graph goes: members are destroyed in reverse order.
  std::unique_ptr<Runner> train_, grads_, apply_;
  // Keyed by the full input type of a batch: rows and every array's dtype (x's, then y's; the
  // sample shapes are the plan's).
  std::map<std::tuple<int64_t, std::vector<dlrt_dtype>, std::vector<dlrt_dtype>>,
           std::unique_ptr<Runner>>
      evals_;
  std::map<std::pair<int64_t, std::vector<dlrt_dtype>>, std::unique_ptr<Runner>> predicts_;
  std::map<dlrt_dtype, std::pair<Value, Value>> exports_;  // save_onnx: (input, output) per dtype
  std::vector<Value> x_data_, y_data_;  // the training set: one variable per input, per output
  int64_t rows_ = 0, batch_ = 0;
  std::vector<dlrt_dtype> x_dtypes_, y_dtypes_;
  std::vector<Shape> y_shapes_;
  uint64_t replica_ = 0;
};

}  // namespace dlrt::nn::detail

#endif  // DLRT_NN_SESSION_HPP_
