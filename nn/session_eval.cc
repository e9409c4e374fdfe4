// session_eval.cc: a Session's evaluation, prediction and ONNX export executables
// (dlrt/nn/session.hpp).
#include "dlrt/nn/session.hpp"

#include "dlrt/nn/losses.hpp"

namespace dlrt::nn::detail {

std::vector<double> Session::eval_batch(const ArrayRefs& xs, const ArrayRefs& ys, int64_t first,
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

std::vector<std::vector<uint8_t>> Session::predict_batch(const ArrayRefs& xs, int64_t first,
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

void Session::save_onnx(const std::string& path, const std::vector<dlrt_dtype>& input_dtypes) {
  auto it = exports_.find(input_dtypes);
  if (it == exports_.end()) {
    Graph& g = graph_;
    Scopes scopes(g, plan_->device_scopes);
    std::string scope = "onnx";
    for (dlrt_dtype d : input_dtypes) scope += std::string("_") + dtype_name(d);
    scope += "/";
    // Every model input is a graph input of the file, also one no output reads (ONNX allows
    // unread inputs; a caller feeds what the Keras model takes).
    std::vector<Value> xp, in;
    for (size_t i = 0; i < input_dtypes.size(); ++i) {
      xp.push_back(g.placeholder(scope + indexed_name("x", i), input_dtypes[i],
                                 batch_dims(1, plan_->inputs.at(i))));
      in.push_back(plan_->input_used(i) ? to_float(g, xp.back(), i) : Value());
    }
    CallContext c{g, false, plan_->seed, scope};
    std::vector<Value> y = forward(c, in);
    it = exports_.emplace(input_dtypes, std::make_pair(std::move(xp), std::move(y))).first;
  }
  std::vector<dlrt_value> ins, outs;
  std::vector<std::string> in_names, out_names;
  for (size_t i = 0; i < it->second.first.size(); ++i) {
    ins.push_back(it->second.first[i].get());
    in_names.push_back(indexed_name("input", i));
  }
  for (size_t k = 0; k < it->second.second.size(); ++k) {
    outs.push_back(it->second.second[k].get());
    out_names.push_back(indexed_name("output", k));
  }
  std::vector<const char*> in_ptrs, out_ptrs;
  for (const auto& s : in_names) in_ptrs.push_back(s.c_str());
  for (const auto& s : out_names) out_ptrs.push_back(s.c_str());
  check(dlrt_graph_export_onnx(graph_.get(), ins.data(), in_ptrs.data(), ins.size(), outs.data(),
                               out_ptrs.data(), outs.size(), 1, path.c_str()));
}

Runner& Session::eval_runner(const ArrayRefs& xs, const ArrayRefs& ys, int64_t count) {
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

}  // namespace dlrt::nn::detail
