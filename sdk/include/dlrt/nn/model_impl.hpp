// dlrt/nn/model_impl.hpp: the bodies of Sequential's larger methods (model.hpp declares
// them; included at its end). Not included on its own.
#ifndef DLRT_NN_MODEL_IMPL_HPP_
#define DLRT_NN_MODEL_IMPL_HPP_

#include <cstdio>
#include <string>
#include <vector>

#include "dlrt/nn/model.hpp"

namespace dlrt::nn {

inline void Sequential::make_plan(const Shape& input) {
  auto plan = std::make_shared<detail::Plan>();
  plan->input = input;
  Shape shape = input;
  std::vector<size_t> trainable;
  for (const std::shared_ptr<Layer>& layer : layers_) {
    std::vector<size_t> mine;
    for (const ParamSpec& p : layer->params(shape)) {
      if (p.trainable) trainable.push_back(plan->state.size());
      mine.push_back(plan->state.size());
      plan->state.push_back({layer->name() + "/" + p.name, p.dims, p.init, p.trainable, -1});
    }
    plan->layer_state.push_back(std::move(mine));
    shape = layer->output_shape(shape);
    plan->layers.push_back(layer);
  }
  for (size_t t : trainable)
    for (const std::string& slot : optimizer_->slot_names()) {
      const detail::StateVar& p = plan->state[t];
      plan->state.push_back(
          {p.name + "/" + slot, p.dims, Initializer::zeros(), false, static_cast<int64_t>(t)});
    }
  plan->iterations = plan->state.size();
  plan->state.push_back({"optimizer/iterations", {}, Initializer::zeros(), false, -1});
  plan->optimizer = optimizer_;
  plan->loss = loss_;
  plan->metrics.assign(metrics_.begin(), metrics_.end());
  plan->seed = config_.seed;
  plan->device_scopes = scopes_at_compile_;
  if (config_.log_device_placement) plan->compile.log_device_placement = true;
  if (!config_.use_capture) plan->compile.use_capture = false;
  if (config_.device == "auto") plan->compile.auto_device = true;
  output_shape_ = shape;
  plan_ = std::move(plan);
}

inline void Sequential::summary(std::ostream& out) const {
  if (!input_ && !plan_)
    throw Error(DLRT_FAILED_PRECONDITION, "summary: " + name_ +
                                              " is not built; give it an Input "
                                              "layer or fit() it first");
  // Keras' print_summary for sequential models: 65 columns, fields cut at 29, 55, 65, the
  // last character before each next field a space.
  const size_t positions[3] = {29, 55, 65};
  auto row = [&](const std::vector<std::string>& fields) {
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) line = line.substr(0, line.size() - 1) + " ";
      line += fields[i];
      line = line.substr(0, positions[i]);
      line += std::string(positions[i] - line.size(), ' ');
    }
    out << line << "\n";
  };
  auto commas = [](int64_t v) {
    std::string s = std::to_string(v);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
      s.insert(static_cast<size_t>(i), ",");
    return s;
  };
  out << "Model: \"" << name_ << "\"\n" << std::string(65, '_') << "\n";
  row({"Layer (type)", "Output Shape", "Param #"});
  out << std::string(65, '=') << "\n";
  Shape shape = plan_ ? plan_->input : *input_;
  int64_t trainable = 0, frozen = 0;
  for (size_t l = 0; l < layers_.size(); ++l) {
    int64_t count = 0;
    for (const ParamSpec& p : layers_[l]->params(shape)) {
      count += element_count(p.dims);
      (p.trainable ? trainable : frozen) += element_count(p.dims);
    }
    shape = layers_[l]->output_shape(shape);
    row({layers_[l]->name() + " (" + layers_[l]->type() + ")", shape_string(shape),
         std::to_string(count)});
    out << std::string(65, l + 1 == layers_.size() ? '=' : '_') << "\n";
  }
  out << "Total params: " << commas(trainable + frozen) << "\n"
      << "Trainable params: " << commas(trainable) << "\n"
      << "Non-trainable params: " << commas(frozen) << "\n"
      << std::string(65, '_') << "\n";
}

inline History Sequential::fit(const Array& x, const Array& y, const FitOptions& o) {
  check_data(x, &y, "fit");
  if (o.batch_size < 1) throw Error(DLRT_INVALID_ARGUMENT, "fit: batch_size must be >= 1");
  if (o.initial_epoch < 0 || o.epochs < o.initial_epoch)
    throw Error(DLRT_INVALID_ARGUMENT, "fit: needs 0 <= initial_epoch <= epochs (got " +
                                           std::to_string(o.initial_epoch) + " and " +
                                           std::to_string(o.epochs) + ")");
  if ((o.validation_x == nullptr) != (o.validation_y == nullptr))
    throw Error(DLRT_INVALID_ARGUMENT, "fit: validation data needs both x and y");
  if (o.validation_x != nullptr) check_data(*o.validation_x, o.validation_y, "fit (validation)");
  const int64_t n = x.rows();
  // Under a strategy the batch is global and must split over the replicas even when the
  // data set is smaller (then the one step is partial).
  const int64_t batch = strategy_ ? o.batch_size : std::min(o.batch_size, n);
  fit_prepare(x, y, batch);

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
  Executable& step_exe = step_executable();
  int64_t global_step = 0;
  bool tracing = false;
  History history;
  for (auto& cb : callbacks) cb->on_train_begin(*this);
  for (int64_t epoch = o.initial_epoch; epoch < o.epochs; ++epoch) {
    Progbar::epoch_header(progress, epoch, o.epochs);
    for (auto& cb : callbacks) cb->on_epoch_begin(*this, epoch);
    const std::vector<int32_t> order = epoch_order(config_.seed, epoch, n, o.shuffle);
    Progbar bar(steps, progress);
    double loss_sum = 0;
    std::vector<double> hits(metrics_.size(), 0.0);
    int64_t seen = 0;
    Logs logs;
    for (int64_t s = 0; s < steps; ++s, ++global_step) {
      if (!o.trace.path.empty() && global_step == o.trace.first) {
        step_exe.set_profiling(true);
        tracing = true;
      }
      const int64_t first = s * batch, count = std::min(batch, n - first);
      const std::vector<double> r = strategy_ ? replicas_->train_step(order.data() + first, count)
                                              : session_->train_step(order.data() + first, count);
      loss_sum += r[0] * static_cast<double>(count);
      seen += count;
      logs = {{"loss", loss_sum / static_cast<double>(seen)}};
      for (size_t m = 0; m < metrics_.size(); ++m) {
        hits[m] += r[1 + m];
        logs.push_back({metrics_[m]->name(), hits[m] / static_cast<double>(seen)});
      }
      bar.update(s + 1, logs);
      for (auto& cb : callbacks) cb->on_train_batch_end(*this, s, logs);
      if (tracing && global_step + 1 == o.trace.first + o.trace.steps) {
        step_exe.set_profiling(false);
        step_exe.write_trace(o.trace.path);
        tracing = false;
      }
    }
    if (o.validation_x != nullptr)
      for (const auto& [k, v] : evaluate(*o.validation_x, *o.validation_y, o.batch_size))
        logs.push_back({"val_" + k, v});
    bar.finish(logs);
    epoch_ = epoch + 1;
    history.append(epoch, logs);
    for (auto& cb : callbacks) cb->on_epoch_end(*this, epoch, logs);
  }
  if (tracing) {  // the run ended inside the window: write what was profiled
    step_exe.set_profiling(false);
    step_exe.write_trace(o.trace.path);
  }
  for (auto& cb : callbacks) cb->on_train_end(*this);
  return history;
}

// One training step per graph (session.hpp): another set size or batch size gets a new
// graph (per replica under a strategy), and the state moves over once its step is compiled.
// The training set is uploaded every fit; under a strategy replica 0 of worker 0's state is
// then broadcast, so every replica starts from the same weights.
inline void Sequential::fit_prepare(const Array& x, const Array& y, int64_t batch) {
  const int64_t n = x.rows();
  if (strategy_) {
    if (!replicas().train_fits(n, batch, x, y)) {
      std::vector<NamedValue> moved;
      if (replicas_->primary().has_split()) {
        moved = state();
        replicas_ = std::make_unique<detail::ReplicaSet>(ctx_, plan_, strategy_, strategy_devices_);
      }
      replicas_->build_train(x, y, batch);
      if (!moved.empty()) set_state(moved);
    }
    replicas_->upload(x, y);
    replicas_->sync_from_chief();
    return;
  }
  if (!session().train_fits(n, batch, x, y)) {
    std::vector<NamedValue> moved;
    if (session_->has_train()) {
      moved = state();
      session_ = std::make_unique<detail::Session>(ctx_, plan_);
    }
    session_->build_train(x, y, batch);
    if (!moved.empty()) set_state(moved);
  }
  session_->upload(x, y);
}

inline Logs Sequential::evaluate(const Array& x, const Array& y, int64_t batch_size) {
  check_data(x, &y, "evaluate");
  if (batch_size < 1) throw Error(DLRT_INVALID_ARGUMENT, "evaluate: batch_size must be >= 1");
  const int64_t n = x.rows(), batch = std::min(batch_size, n);
  std::vector<double> sums(1 + metrics_.size(), 0.0);
  for (int64_t first = 0; first < n; first += batch) {
    const std::vector<double> r = session().eval_batch(x, y, first, std::min(batch, n - first));
    for (size_t k = 0; k < r.size(); ++k) sums[k] += r[k];
  }
  Logs logs = {{"loss", sums[0] / static_cast<double>(n)}};
  for (size_t m = 0; m < metrics_.size(); ++m)
    logs.push_back({metrics_[m]->name(), sums[1 + m] / static_cast<double>(n)});
  return logs;
}

inline Array Sequential::predict(const Array& x, int64_t batch_size) {
  check_data(x, nullptr, "predict");
  if (batch_size < 1) throw Error(DLRT_INVALID_ARGUMENT, "predict: batch_size must be >= 1");
  const int64_t n = x.rows(), batch = std::min(batch_size, n);
  std::vector<uint8_t> bytes;
  for (int64_t first = 0; first < n; first += batch) {
    const std::vector<uint8_t> part = session().predict_batch(x, first, std::min(batch, n - first));
    bytes.insert(bytes.end(), part.begin(), part.end());
  }
  std::vector<int64_t> dims = {n};
  dims.insert(dims.end(), output_shape_.begin(), output_shape_.end());
  return Array(DLRT_F32, dims, std::move(bytes));
}

inline std::vector<Sequential::NamedValue> Sequential::state() { return replica_state(0); }

inline std::vector<Sequential::NamedValue> Sequential::replica_state(size_t replica) {
  plan();  // throws when not built
  std::vector<NamedValue> out;
  const std::vector<detail::Session*> sessions = all_sessions();
  if (replica >= sessions.size())
    throw Error(DLRT_OUT_OF_RANGE, "replica_state: replica " + std::to_string(replica) + " of " +
                                       std::to_string(sessions.size()));
  detail::Session& s = *sessions[replica];
  for (size_t i = 0; i < plan_->state.size(); ++i)
    out.push_back(
        {plan_->state[i].name, plan_->state[i].dims, s.graph().read_variable<float>(s.vars()[i])});
  return out;
}

inline void Sequential::set_state(const std::vector<NamedValue>& values) {
  plan();
  for (detail::Session* s : all_sessions()) set_state_of(*s, values);
}

inline void Sequential::set_state_of(detail::Session& s, const std::vector<NamedValue>& values) {
  for (const NamedValue& v : values) {
    size_t i = 0;
    while (i < plan_->state.size() && plan_->state[i].name != v.name) ++i;
    if (i == plan_->state.size())
      throw Error(DLRT_INVALID_ARGUMENT,
                  "set_state: '" + v.name + "' is not a variable of " + name_);
    if (v.dims != plan_->state[i].dims ||
        static_cast<int64_t>(v.values.size()) != element_count(v.dims))
      throw Error(DLRT_INVALID_ARGUMENT,
                  "set_state: '" + v.name + "' has shape " + dims_string(v.dims) + " (" +
                      std::to_string(v.values.size()) + " values); the model's is " +
                      dims_string(plan_->state[i].dims));
    s.graph().write_variable(s.vars()[i], v.values);
  }
}

}  // namespace dlrt::nn

#endif  // DLRT_NN_MODEL_IMPL_HPP_
