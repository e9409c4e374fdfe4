// tape.cc: Tape, what a step function builds with: inputs, models called on graph values,
// minimize (dlrt/nn/tape.hpp). It writes into the TrainStep's trace, so it reads the step's
// private state (train_step.hpp, step_trace.hpp).
#include "dlrt/nn/tape.hpp"

#include <set>

#include "dlrt/nn/loss_scale.hpp"
#include "dlrt/nn/run_plan.hpp"
#include "dlrt/nn/train_step.hpp"
#include "step_trace.hpp"

namespace dlrt::nn {

Value Tape::loss(const Loss& loss, Value y_true, Value y_pred) {
  Graph& g = *graph_;
  Value per = loss.per_sample(g, y_pred, loss.prepare_targets(g, y_true));
  const float rows = static_cast<float>(y_pred.dims().at(0));
  return g.op1("div", {g.op1("reduce_sum", {per}), g.constant<float>("", {}, {rows})});
}

Tape::Tape(TrainStep& step, detail::StepTrace& trace)
    : step_(step), trace_(trace), graph_(trace.graph.get()) {}

uint64_t Tape::replica() const { return trace_.global_replica; }
int64_t Tape::replicas_in_sync() const { return step_.in_sync_; }

uint64_t Tape::salted(uint64_t seed) const {
  return trace_.global_replica == 0
             ? seed
             : derive_seed(seed, "replica/" + std::to_string(trace_.global_replica));
}

Value Tape::input(const std::string& name) {
  detail::StepTrace& t = trace_;
  for (size_t i = 0; i < t.feed_names.size(); ++i)
    if (t.feed_names[i] == name) {
      t.read.insert(name);
      return t.placeholders[i];
    }
  std::string have;
  for (const std::string& n : t.feed_names) have += (have.empty() ? "" : ", ") + n;
  throw Error(DLRT_INVALID_ARGUMENT,
              "TrainStep: the step reads input '" + name +
                  "', which the run does not feed (feeds: " + (have.empty() ? "none" : have) + ")");
}

Value Tape::random_normal(const std::vector<int64_t>& dims, double stddev) {
  const uint64_t seed = salted(
      derive_seed(step_.options_.seed, "tape/random_normal/" + std::to_string(random_draws_++)));
  return graph_->op1("random_normal", {},
                     {{"shape", dims}, {"stddev", stddev}, {"seed", static_cast<int64_t>(seed)}});
}

std::vector<Value> Tape::call_model(Model& model, const std::vector<Value>& inputs, bool training) {
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
      throw Error(DLRT_INVALID_ARGUMENT, model.name() + ": input " + std::to_string(i) + " is " +
                                             dtype_name(dt) + dims_string(d) +
                                             "; the model takes " + (ids ? "i32|i64" : "f32") +
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

Value Tape::variable(const Variable& v) {
  for (size_t k = 0; k < step_.bindings_.size(); ++k) {
    const TrainStep::Binding& b = step_.bindings_[k];
    if (b.model != v.model || v.model == nullptr) continue;
    if (trace_.model_vars.size() <= k || trace_.model_vars[k].empty()) break;
    for (size_t i = 0; i < b.plan->state.size(); ++i)
      if (b.plan->state[i].name == v.name && trace_.model_vars[k][i])
        return trace_.model_vars[k][i];
    throw Error(DLRT_INVALID_ARGUMENT,
                "TrainStep: '" + v.name + "' is not a variable of model " + v.model->name());
  }
  throw Error(DLRT_INVALID_ARGUMENT,
              "TrainStep: variable '" + v.name + "' of model " +
                  (v.model ? v.model->name() : std::string("(none)")) +
                  " is not in this step: the step function must call the model first");
}

void Tape::minimize(Value loss, const Optimizer& optimizer, const std::vector<Variable>& variables,
                    const std::string& name) {
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
    Value scale =
        TrainStep::make_variable(t, opt_name + "/loss_scale", {}, false, detail::kInitialLossScale);
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

}  // namespace dlrt::nn
