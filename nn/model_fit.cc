// model_fit.cc: Model's fit, train_on_batch, evaluate and predict loops (dlrt/nn/model.hpp).
#include "dlrt/nn/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dlrt/nn/metrics.hpp"
#include "dlrt/nn/optimizers.hpp"
#include "dlrt/nn/plan.hpp"
#include "dlrt/nn/schedules.hpp"
#include "dlrt/nn/session.hpp"
#include "replicated.hpp"

namespace dlrt::nn {

std::vector<std::string> Model::log_names() const {
  const std::vector<std::string> outs = output_names();
  const bool several = outs.size() > 1;
  std::vector<std::string> names = {"loss"};
  if (several)
    for (const std::string& o : outs) names.push_back(o + "_loss");
  for (const std::string& o : outs)
    for (const auto& m : metrics_) names.push_back((several ? o + "_" : "") + m->name());
  return names;
}

Logs Model::logs_of(const std::vector<double>& results, double loss_rows, double count_rows) const {
  const std::vector<std::string> names = log_names();
  const size_t losses = plan_->loss_results();
  Logs logs;
  for (size_t k = 0; k < results.size(); ++k)
    logs.push_back({names.at(k), results[k] / (k < losses ? loss_rows : count_rows)});
  return logs;
}

void Model::write_learning_rate(int64_t steps_done, float* written) {
  const float lr = static_cast<float>(learning_rate_override_ ? *learning_rate_override_
                                                              : optimizer_->learning_rate().at(steps_done));
  if (lr == *written) return;
  for (detail::Session* s : all_sessions())
    s->graph().write_variable(s->vars()[plan_->learning_rate], std::vector<float>{lr});
  *written = lr;
}

void Model::set_learning_rate(double lr) {
  if (!(lr > 0.0) || !std::isfinite(lr))
    throw Error(DLRT_INVALID_ARGUMENT,
                "set_learning_rate: the rate must be finite and > 0 (got " + std::to_string(lr) + ")");
  learning_rate_override_ = lr;
}

double Model::learning_rate() {
  if (!optimizer_)
    throw Error(DLRT_FAILED_PRECONDITION,
                "learning_rate: the model has no optimizer; compile it with one first");
  if (learning_rate_override_) return *learning_rate_override_;
  const auto steps = static_cast<int64_t>(
      session().graph().read_variable<float>(session().vars()[plan_->iterations]).at(0));
  return optimizer_->learning_rate().at(steps);
}

Executable& Model::step_executable() {
  return strategy_ ? replicas_->primary().grads_executable() : session_->train_executable();
}

History Model::fit_of(const detail::ArrayRefs& xs, const detail::ArrayRefs& ys,
                      const FitOptions& o) {
  check_data(xs, &ys, "fit");
  if (o.batch_size < 1) throw Error(DLRT_INVALID_ARGUMENT, "fit: batch_size must be >= 1");
  if (o.initial_epoch < 0 || o.epochs < o.initial_epoch)
    throw Error(DLRT_INVALID_ARGUMENT, "fit: needs 0 <= initial_epoch <= epochs (got " +
                                           std::to_string(o.initial_epoch) + " and " +
                                           std::to_string(o.epochs) + ")");
  if ((o.validation_x == nullptr) != (o.validation_y == nullptr) ||
      (o.validation_xs == nullptr) != (o.validation_ys == nullptr))
    throw Error(DLRT_INVALID_ARGUMENT, "fit: validation data needs both x and y");
  if (o.validation_x != nullptr && o.validation_xs != nullptr)
    throw Error(DLRT_INVALID_ARGUMENT,
                "fit: validation data given twice (validation_x/y and validation_xs/ys); give "
                "one of them");
  detail::ArrayRefs val_x, val_y;
  if (o.validation_x != nullptr) val_x = {o.validation_x}, val_y = {o.validation_y};
  if (o.validation_xs != nullptr) val_x = refs(*o.validation_xs), val_y = refs(*o.validation_ys);
  const bool validate = o.validation_x != nullptr || o.validation_xs != nullptr;
  if (validate) check_data(val_x, &val_y, "fit (validation)");
  const int64_t n = xs[0]->rows();
  // Under a strategy the batch is global and must split over the replicas even when the
  // data set is smaller (then the one step is partial).
  const int64_t batch = strategy_ ? o.batch_size : std::min(o.batch_size, n);
  fit_prepare(xs, ys, batch);

  // Random layers (Dropout) draw with the step executable's run count: continue it from the
  // steps already taken, so a resumed fit draws the masks the uninterrupted one would.
  const uint64_t steps_taken = static_cast<uint64_t>(
      session().graph().read_variable<float>(session().vars()[plan_->iterations]).at(0));
  if (strategy_) replicas_->set_run_count(steps_taken);
  else session_->train_executable().set_run_count(steps_taken);

  // Multi-worker: rank 0 alone prints and runs chief-only callbacks (files).
  const bool quiet_rank = strategy_ && strategy_->rank() != 0;
  ProgressOptions progress = o.progress;
  if (quiet_rank && !o.all_ranks_progress) progress.verbose = 0;
  std::vector<std::shared_ptr<Callback>> callbacks;
  for (const auto& cb : o.callbacks)
    if (!(quiet_rank && cb->chief_only())) callbacks.push_back(cb);

  const int64_t steps = (n + batch - 1) / batch;
  // Every hook is called with the Model; a Sequential's also with itself, for callbacks
  // written against Sequential& (callbacks.hpp).
  Sequential* seq = as_sequential();
  Executable& step_exe = step_executable();
  int64_t global_step = 0;
  bool tracing = false;
  // The rate last written into "optimizer/learning_rate": none yet this fit (the variable may
  // hold a checkpoint's or an earlier fit's value, which the first step overwrites).
  float written_rate = std::numeric_limits<float>::quiet_NaN();
  History history;
  stop_training = false;
  for (auto& cb : callbacks) {
    cb->on_train_begin(static_cast<Model&>(*this));
    if (seq) cb->on_train_begin(*seq);
  }
  for (int64_t epoch = o.initial_epoch; epoch < o.epochs; ++epoch) {
    Progbar::epoch_header(progress, epoch, o.epochs);
    for (auto& cb : callbacks) {
      cb->on_epoch_begin(static_cast<Model&>(*this), epoch);
      if (seq) cb->on_epoch_begin(*seq, epoch);
    }
    const std::vector<int32_t> order = epoch_order(config_.seed, epoch, n, o.shuffle);
    Progbar bar(steps, progress);
    // Per result (Plan::results): the losses times their rows, the metric counts.
    std::vector<double> sums(plan_->results(), 0.0);
    const size_t losses = plan_->loss_results();
    int64_t seen = 0;
    Logs logs;
    for (int64_t s = 0; s < steps; ++s, ++global_step) {
      if (!o.trace.path.empty() && global_step == o.trace.first) {
        step_exe.set_profiling(true);
        tracing = true;
      }
      const int64_t first = s * batch, count = std::min(batch, n - first);
      write_learning_rate(static_cast<int64_t>(steps_taken) + global_step, &written_rate);
      const std::vector<double> r = strategy_ ? replicas_->train_step(order.data() + first, count)
                                              : session_->train_step(order.data() + first, count);
      for (size_t k = 0; k < r.size(); ++k)
        sums[k] += k < losses ? r[k] * static_cast<double>(count) : r[k];
      seen += count;
      logs = logs_of(sums, static_cast<double>(seen), static_cast<double>(seen));
      bar.update(s + 1, logs);
      for (auto& cb : callbacks) {
        cb->on_train_batch_end(static_cast<Model&>(*this), s, logs);
        if (seq) cb->on_train_batch_end(*seq, s, logs);
      }
      if (tracing && global_step + 1 == o.trace.first + o.trace.steps) {
        step_exe.set_profiling(false);
        step_exe.write_trace(o.trace.path);
        tracing = false;
      }
    }
    if (validate)
      for (const auto& [k, v] : evaluate_of(val_x, val_y, o.batch_size))
        logs.push_back({"val_" + k, v});
    bar.finish(logs);
    epoch_ = epoch + 1;
    history.append(epoch, logs);
    for (auto& cb : callbacks) {
      cb->on_epoch_end(static_cast<Model&>(*this), epoch, logs);
      if (seq) cb->on_epoch_end(*seq, epoch, logs);
    }
    if (stop_training) break;
  }
  if (tracing) {  // the run ended inside the window: write what was profiled
    step_exe.set_profiling(false);
    step_exe.write_trace(o.trace.path);
  }
  for (auto& cb : callbacks) {
    cb->on_train_end(static_cast<Model&>(*this));
    if (seq) cb->on_train_end(*seq);
  }
  return history;
}

// One training step per graph (session.hpp): another set size or batch size gets a new
// graph (per replica under a strategy), and the state moves over once its step is compiled.
// The training set (every x and y) is uploaded every fit; under a strategy replica 0 of worker
// 0's state is then broadcast, so every replica starts from the same weights.
void Model::fit_prepare(const detail::ArrayRefs& xs, const detail::ArrayRefs& ys, int64_t batch) {
  const int64_t n = xs.at(0)->rows();
  if (strategy_) {
    if (!replicas().train_fits(n, batch, xs, ys)) {
      std::vector<NamedValue> moved;
      if (replicas_->primary().has_split()) {
        moved = state();
        replicas_ = std::make_unique<detail::ReplicaSet>(ctx_, plan_, strategy_, strategy_devices_);
      }
      replicas_->build_train(xs, ys, batch);
      if (!moved.empty()) set_state(moved);
    }
    replicas_->upload(xs, ys);
    replicas_->sync_from_chief();
    return;
  }
  if (!session().train_fits(n, batch, xs, ys)) {
    std::vector<NamedValue> moved;
    if (session_->has_train()) {
      moved = state();
      session_ = std::make_unique<detail::Session>(ctx_, plan_);
    }
    session_->build_train(xs, ys, batch);
    if (!moved.empty()) set_state(moved);
  }
  session_->upload(xs, ys);
}

Logs Model::train_on_batch_of(const detail::ArrayRefs& xs, const detail::ArrayRefs& ys) {
  check_data(xs, &ys, "train_on_batch");
  const int64_t n = xs[0]->rows();
  fit_prepare(xs, ys, n);  // xs and ys are the training set of this one step
  const uint64_t steps_taken = static_cast<uint64_t>(
      session().graph().read_variable<float>(session().vars()[plan_->iterations]).at(0));
  if (strategy_) replicas_->set_run_count(steps_taken);
  else session_->train_executable().set_run_count(steps_taken);
  float written_rate = std::numeric_limits<float>::quiet_NaN();
  write_learning_rate(static_cast<int64_t>(steps_taken), &written_rate);
  std::vector<int32_t> rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  const std::vector<double> r =
      strategy_ ? replicas_->train_step(rows.data(), n) : session_->train_step(rows.data(), n);
  // The step's losses are means over its rows already; the counts are divided here.
  return logs_of(r, 1.0, static_cast<double>(n));
}

Logs Model::evaluate_of(const detail::ArrayRefs& xs, const detail::ArrayRefs& ys,
                        int64_t batch_size) {
  check_data(xs, &ys, "evaluate");
  if (batch_size < 1) throw Error(DLRT_INVALID_ARGUMENT, "evaluate: batch_size must be >= 1");
  const int64_t n = xs[0]->rows(), batch = std::min(batch_size, n);
  std::vector<double> sums(plan_->results(), 0.0);
  for (int64_t first = 0; first < n; first += batch) {
    const std::vector<double> r = session().eval_batch(xs, ys, first, std::min(batch, n - first));
    for (size_t k = 0; k < r.size(); ++k) sums[k] += r[k];
  }
  return logs_of(sums, static_cast<double>(n), static_cast<double>(n));
}

Array Model::predict(const Array& x, int64_t batch_size) {
  if (num_outputs() != 1)
    throw Error(DLRT_INVALID_ARGUMENT,
                "predict: " + name_ + " has " + std::to_string(num_outputs()) + " outputs (" +
                    joined(output_names()) +
                    "); predict a std::vector<Array> (one per input) to get them all");
  return predict_of({&x}, batch_size).at(0);
}

std::vector<Array> Model::predict_of(const detail::ArrayRefs& xs, int64_t batch_size) {
  check_data(xs, nullptr, "predict");
  if (batch_size < 1) throw Error(DLRT_INVALID_ARGUMENT, "predict: batch_size must be >= 1");
  const int64_t n = xs[0]->rows(), batch = std::min(batch_size, n);
  std::vector<std::vector<uint8_t>> bytes(output_shapes_.size());
  for (int64_t first = 0; first < n; first += batch) {
    const std::vector<std::vector<uint8_t>> part =
        session().predict_batch(xs, first, std::min(batch, n - first));
    for (size_t k = 0; k < bytes.size(); ++k)
      bytes[k].insert(bytes[k].end(), part.at(k).begin(), part.at(k).end());
  }
  std::vector<Array> out;
  for (size_t k = 0; k < bytes.size(); ++k) {
    std::vector<int64_t> dims = {n};
    dims.insert(dims.end(), output_shapes_[k].begin(), output_shapes_[k].end());
    out.emplace_back(DLRT_F32, dims, std::move(bytes[k]));
  }
  return out;
}

}  // namespace dlrt::nn
