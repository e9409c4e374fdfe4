// session_train.cc: a Session's training step, and a replica's split step of grads and apply
// (dlrt/nn/session.hpp).
#include "dlrt/nn/session.hpp"

#include "dlrt/nn/loss_scale.hpp"
#include "dlrt/nn/losses.hpp"

namespace dlrt::nn::detail {

bool Session::train_fits(int64_t rows, int64_t batch, const ArrayRefs& xs,
                         const ArrayRefs& ys) const {
  return (train_ || grads_) && rows_ == rows && batch_ == batch && x_dtypes_ == dtypes(xs) &&
         y_dtypes_ == dtypes(ys) && y_shapes_ == sample_shapes(ys);
}

void Session::build_train(const ArrayRefs& xs, const ArrayRefs& ys, int64_t batch) {
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
      "div", {g.op1("reduce_sum", {g.op1("mul", {per, valid})}), g.op1("reduce_sum", {valid})}, {},
      penalty ? "" : "train/loss");
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
      fetches.push_back(g.op1(
          "div", {g.op1("reduce_sum", {g.op1("mul", {p, valid})}), g.op1("reduce_sum", {valid})}));
  add_metric_counts(g, y_pred, y_true, valid, &fetches);

  dlrt::CompileOptions o = plan_->compile;
  o.run_assigns = true;
  train_ = std::make_unique<Runner>(ctx_, g, std::vector<Value>{idx, valid},
                                    std::vector<std::string>{"train/batch_indices", "train/valid"},
                                    fetches, o);
}

void Session::upload(const ArrayRefs& xs, const ArrayRefs& ys) {
  for (size_t i = 0; i < xs.size(); ++i)
    check(dlrt_graph_variable_write(graph_.get(), x_data_.at(i).get(), xs[i]->data(),
                                    xs[i]->bytes().size()));
  for (size_t k = 0; k < ys.size(); ++k)
    check(dlrt_graph_variable_write(graph_.get(), y_data_.at(k).get(), ys[k]->data(),
                                    ys[k]->bytes().size()));
}

std::vector<double> Session::train_step(const int32_t* indices, int64_t count) {
  feed_batch(*train_, indices, count);
  train_->run();
  std::vector<double> out;
  for (size_t f = 0; f < train_->fetches.size(); ++f) out.push_back(train_->scalar(f));
  return out;
}

void Session::build_split(const ArrayRefs& xs, const ArrayRefs& ys, int64_t batch) {
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
  grads_ = std::make_unique<Runner>(ctx_, g, std::vector<Value>{idx, valid},
                                    std::vector<std::string>{"grads/batch_indices", "grads/valid"},
                                    fetches, o);

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
    g.assign(state_updates[k].variable, g.op1("mul", {feeds[trainable.size() + k], feeds.back()}));
  o.run_assigns = true;
  apply_ = std::make_unique<Runner>(ctx_, g, feeds, names, std::vector<Value>{step}, o);
}

void Session::split_grads(const int32_t* indices, int64_t count) {
  feed_batch(*grads_, indices, count);
  grads_->run();
}

void Session::split_apply(float scale) {
  const size_t n = apply_->feeds.size() - 1;
  apply_->feeds[n].write(std::vector<float>{scale});
  std::vector<const Tensor*> in;
  for (size_t k = 0; k < n; ++k) in.push_back(&grads_->fetches[k]);
  in.push_back(&apply_->feeds[n]);
  apply_->exe.run(in, apply_->fetches);
}

}  // namespace dlrt::nn::detail
