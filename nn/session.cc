// session.cc: a model's Session — its graph, variables and the helpers its executables are
// built with (dlrt/nn/session.hpp).
#include "dlrt/nn/session.hpp"

#include <utility>

#include "dlrt/nn/losses.hpp"
#include "dlrt/nn/metrics.hpp"
#include "dlrt/nn/optimizers.hpp"

namespace dlrt::nn::detail {

Session::Session(const Context& ctx, std::shared_ptr<const Plan> plan, uint64_t replica)
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

void Session::apply_updates(Graph& g, const std::vector<size_t>& trainable,
                            const std::vector<Value>& grads, Value step, Value apply_if) {
  std::vector<Value> params;
  std::vector<std::vector<Value>> slots;
  for (size_t k : trainable) {
    params.push_back(vars_[k]);
    slots.push_back(slots_of(k));
  }
  plan_->optimizer->apply_all(g, params, grads, slots, step, vars_[plan_->learning_rate], apply_if);
}

std::vector<size_t> Session::trainable_vars() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < vars_.size(); ++i)
    if (plan_->state[i].trainable) out.push_back(i);
  return out;
}

std::vector<Value> Session::gradients(const Value& loss, const std::vector<size_t>& wrt_vars) {
  std::vector<dlrt_value> wrt;
  for (size_t i : wrt_vars) wrt.push_back(vars_[i].get());
  std::vector<dlrt_value> grads(wrt.size(), DLRT_INVALID_VALUE);
  check(dlrt_graph_gradients(graph_.get(), loss.get(), wrt.data(), wrt.size(), grads.data()));
  std::vector<Value> out;
  for (dlrt_value v : grads) out.push_back(Value(graph_.get(), v));
  return out;
}

std::vector<Value> Session::slots_of(size_t var) const {
  std::vector<Value> slots;
  for (size_t i = 0; i < plan_->state.size(); ++i)
    if (plan_->state[i].owner == static_cast<int64_t>(var)) slots.push_back(vars_[i]);
  return slots;
}

void Session::feed_batch(Runner& r, const int32_t* indices, int64_t count) {
  std::vector<int32_t> idx(static_cast<size_t>(batch_), 0);
  std::vector<float> valid(static_cast<size_t>(batch_), 0.f);
  for (int64_t i = 0; i < count; ++i) {
    idx[static_cast<size_t>(i)] = indices[i];
    valid[static_cast<size_t>(i)] = 1.f;
  }
  r.feeds[0].write(idx);
  r.feeds[1].write(valid);
}

void Session::make_data(const ArrayRefs& xs, const ArrayRefs& ys, int64_t batch) {
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

std::vector<Value> Session::gathered_inputs(Graph& g, Value idx) const {
  std::vector<Value> out;
  for (size_t i = 0; i < x_data_.size(); ++i)
    out.push_back(to_float(g, g.op1("gather_rows", {x_data_[i], idx}), i));
  return out;
}

std::vector<Value> Session::gathered_targets(Graph& g, Value idx) const {
  std::vector<Value> out;
  for (const Value& y : y_data_)
    out.push_back(plan_->loss->prepare_targets(g, g.op1("gather_rows", {y, idx})));
  return out;
}

std::vector<Value> Session::per_sample_losses(Graph& g, const std::vector<Value>& y_pred,
                                              const std::vector<Value>& y_true) const {
  std::vector<Value> out;
  for (size_t k = 0; k < y_pred.size(); ++k)
    out.push_back(plan_->loss->per_sample(g, y_pred[k], y_true.at(k)));
  return out;
}

Value Session::weighted_sum(Graph& g, const std::vector<Value>& per_output) const {
  Value total;
  for (size_t k = 0; k < per_output.size(); ++k) {
    Value p = per_output[k];
    const float w = plan_->loss_weight(k);
    if (w != 1.f) p = g.op1("mul", {p, g.constant<float>("", {}, {w})});
    total = total ? g.op1("add", {total, p}) : p;
  }
  return total;
}

void Session::add_metric_counts(Graph& g, const std::vector<Value>& y_pred,
                                const std::vector<Value>& y_true, Value valid,
                                std::vector<Value>* fetches) const {
  for (size_t k = 0; k < y_pred.size(); ++k)
    for (const auto& m : plan_->metrics)
      fetches->push_back(m->count(g, y_pred[k], y_true.at(k), valid));
}

std::string Session::dtypes_name(const ArrayRefs& a) {
  std::string out;
  for (const Array* x : a) out += (out.empty() ? "" : "_") + dtype_name(x->dtype());
  return out;
}

uint64_t Session::train_seed() const {
  return replica_ == 0 ? plan_->seed
                       : derive_seed(plan_->seed, "replica/" + std::to_string(replica_));
}

void Session::write_rows(Tensor& t, const Array& a, int64_t first, int64_t count) {
  const size_t rb = a.row_bytes();
  check(dlrt_tensor_write(t.get(), a.data() + static_cast<size_t>(first) * rb,
                          static_cast<size_t>(count) * rb));
}

Value Session::to_float(Graph& g, Value raw, size_t input) const {
  if (raw.dtype() == DLRT_F32) return raw;
  if ((raw.dtype() == DLRT_I32 || raw.dtype() == DLRT_I64) && model_input_ids(*plan_, input) > 0)
    return raw;
  Value f = g.op1("cast", {raw}, {{"dtype", DLRT_F32}});
  if (raw.dtype() != DLRT_U8) return f;
  return g.op1("mul", {f, g.constant<float>("", {}, {1.f / 255.f})});
}

std::vector<Value> Session::forward(CallContext& c, std::vector<Value> x) {
  return run_plan(*plan_, c, std::move(x), vars_);
}

Value Session::regularization(Graph& g) {
  Value total;
  for (size_t i = 0; i < plan_->state.size(); ++i) {
    if (!plan_->state[i].regularizer.active()) continue;
    Value p = plan_->state[i].regularizer.penalty(g, vars_[i]);
    total = total ? g.op1("add", {total, p}) : p;
  }
  return total;
}

std::vector<dlrt_dtype> Session::dtypes(const ArrayRefs& a) {
  std::vector<dlrt_dtype> out;
  for (const Array* x : a) out.push_back(x->dtype());
  return out;
}

std::vector<Shape> Session::sample_shapes(const ArrayRefs& a) {
  std::vector<Shape> out;
  for (const Array* x : a) out.push_back(x->sample_shape());
  return out;
}

std::vector<int64_t> Session::batch_dims(int64_t b, const Shape& sample) {
  std::vector<int64_t> d = {b};
  d.insert(d.end(), sample.begin(), sample.end());
  return d;
}

}  // namespace dlrt::nn::detail
