// dlrt/nn/model_impl.hpp: the bodies of Model's larger methods (model.hpp declares them;
// included at its end). Not included on its own.
#ifndef DLRT_NN_MODEL_IMPL_HPP_
#define DLRT_NN_MODEL_IMPL_HPP_

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "dlrt/nn/model.hpp"
#include "dlrt/nn/summary_format.hpp"

namespace dlrt::nn {

inline void Model::make_plan(const std::vector<Shape>& inputs) {
  if (sequential_) {
    // The chain: node k is layer k on slot k (slot 0 the input, slot k > 0 node k-1's output).
    graph_ = detail::FunctionalGraph();
    graph_.inputs = inputs;
    graph_.input_names = {"input"};
    graph_.layers = layers_;
    for (size_t k = 0; k < layers_.size(); ++k) graph_.nodes.push_back({k, {k}, 0});
    graph_.outputs = {layers_.size()};
  }
  auto plan = std::make_shared<detail::Plan>();
  plan->inputs = inputs;
  plan->input = inputs.at(0);
  plan->layers = graph_.layers;
  plan->nodes = graph_.nodes;
  plan->outputs = graph_.outputs;
  plan->layer_state.resize(graph_.layers.size());
  // Every slot's shape, node by node; a layer's parameters come from its first call, and a
  // shared layer's later calls must need the same ones.
  std::vector<Shape> slots = inputs;
  std::vector<std::vector<ParamSpec>> first_params(graph_.layers.size());
  std::vector<size_t> trainable;
  for (const detail::PlanNode& n : graph_.nodes) {
    const Layer& layer = *graph_.layers[n.layer];
    std::vector<Shape> in;
    for (size_t s : n.inputs) in.push_back(slots.at(s));
    std::vector<ParamSpec> params = layer.params_multi(in);
    if (n.call == 0) {
      for (const ParamSpec& p : params) {
        const bool trains = p.trainable && layer.trainable();  // a frozen layer's are not
        if (trains) trainable.push_back(plan->state.size());
        plan->layer_state[n.layer].push_back(plan->state.size());
        plan->state.push_back(
            {layer.name() + "/" + p.name, p.dims, p.init, trains, -1, p.regularizer, p.trainable});
      }
      first_params[n.layer] = params;
    } else {
      bool same = params.size() == first_params[n.layer].size();
      for (size_t i = 0; same && i < params.size(); ++i)
        same = params[i].dims == first_params[n.layer][i].dims;
      if (!same)
        throw Error(DLRT_INVALID_ARGUMENT,
                    name_ + ": shared layer " + layer.name() + " (" + layer.type() +
                        ") is called on " + detail::shapes_string(in) +
                        ", which needs other weights than its first call's; a shared layer's "
                        "calls must fit the same weights");
    }
    slots.push_back(layer.output_shape_multi(in));
  }
  std::vector<Shape> output_shapes;
  for (size_t s : graph_.outputs) output_shapes.push_back(slots.at(s));
  if (sequential_) graph_.slot_shapes = slots;
  // Compiled without optimizer (inference, custom steps): the layers' state only.
  if (!optimizer_) trainable.clear();
  for (size_t t : trainable)
    for (const std::string& slot : optimizer_->slot_names()) {
      const detail::StateVar& p = plan->state[t];
      plan->state.push_back(
          {p.name + "/" + slot, p.dims, Initializer::zeros(), false, static_cast<int64_t>(t), {}});
    }
  // The rate every update reads (schedules.hpp); fit writes it before the steps that need it.
  plan->learning_rate = plan->iterations = detail::kNoStateVar;
  // Each layer's compute dtype: the model's policy (CompileConfig::dtype_policy) or else the
  // layer's own; f32 for the float32_only layers. All f32: no casts (compute_dtype empty).
  std::vector<dlrt_dtype> compute;
  bool any_mixed = false, any_f16 = false;
  for (const auto& layer : graph_.layers) {
    const std::string& policy =
        config_.dtype_policy.empty() ? layer->dtype_policy() : config_.dtype_policy;
    const dlrt_dtype d = layer->float32_only() ? DLRT_F32 : policy_compute_dtype(policy);
    any_mixed = any_mixed || d != DLRT_F32;
    any_f16 = any_f16 || d == DLRT_F16;
    compute.push_back(d);
  }
  if (any_mixed) plan->compute_dtype = std::move(compute);
  // Batch-norm folding at inference: a BatchNormalization (channel last) whose one input is
  // a linear Conv2D's output that nothing else reads. Not under a mixed policy (the casts
  // between the two layers would change what folds).
  if (config_.fold_batch_norm && !any_mixed) {
    std::vector<int> reads(slots.size(), 0);
    for (const detail::PlanNode& n : graph_.nodes)
      for (size_t s : n.inputs) ++reads[s];
    for (size_t s : graph_.outputs) ++reads[s];
    std::vector<int64_t> fold(graph_.nodes.size(), -1);
    bool any = false;
    for (size_t j = 0; j < graph_.nodes.size(); ++j) {
      const detail::PlanNode& n = graph_.nodes[j];
      const auto* bn = dynamic_cast<const BatchNormalization*>(graph_.layers[n.layer].get());
      if (bn == nullptr || n.inputs.size() != 1 || n.inputs[0] < inputs.size()) continue;
      const size_t s = n.inputs[0], k = s - inputs.size();  // node k made slot s
      const auto* conv = dynamic_cast<const Conv2D*>(graph_.layers[graph_.nodes[k].layer].get());
      if (conv == nullptr || !conv->foldable() || reads[s] != 1 || !bn->folds_into_conv(slots[s]))
        continue;
      fold[j] = static_cast<int64_t>(k);
      any = true;
    }
    if (any) plan->fold_bn = std::move(fold);
  }
  // BatchNormalization + ReLU fusion (CompileConfig::fuse_batch_norm_relu): node j, a
  // BatchNormalization whose output slot is read once, by a plain ReLU node (not a model
  // output), builds its op with activation relu; run_plan passes the value through that ReLU.
  if (config_.fuse_batch_norm_relu) {
    std::vector<int> reads(slots.size(), 0);
    std::vector<int64_t> reader(slots.size(), -1);
    for (size_t j = 0; j < graph_.nodes.size(); ++j)
      for (size_t s : graph_.nodes[j].inputs) ++reads[s], reader[s] = static_cast<int64_t>(j);
    for (size_t s : graph_.outputs) ++reads[s];
    std::vector<char> fuse(graph_.nodes.size(), 0);
    bool any = false;
    for (size_t j = 0; j < graph_.nodes.size(); ++j) {
      const size_t s = inputs.size() + j;  // the slot node j makes
      if (dynamic_cast<const BatchNormalization*>(graph_.layers[graph_.nodes[j].layer].get()) ==
              nullptr ||
          reads[s] != 1 || reader[s] < 0)
        continue;
      const Layer& next = *graph_.layers[graph_.nodes[size_t(reader[s])].layer];
      if (!detail::is_relu_layer(next)) continue;
      fuse[j] = 1;
      any = true;
    }
    if (any) plan->fuse_bn_relu = std::move(fuse);
  }
  // Residual tails (CompileConfig::fuse_batch_norm_add_relu): an Add node k of two inputs
  // whose output slot only a plain ReLU node reads, one of whose inputs is a trainable
  // BatchNormalization node j's slot read by nothing else (the first such input when both
  // are). Not under a mixed policy (the Add would compute in the policy's dtype).
  if (config_.fuse_batch_norm_add_relu && optimizer_ && !any_mixed) {
    std::vector<int> reads(slots.size(), 0);
    std::vector<int64_t> reader(slots.size(), -1);
    for (size_t j = 0; j < graph_.nodes.size(); ++j)
      for (size_t s : graph_.nodes[j].inputs) ++reads[s], reader[s] = static_cast<int64_t>(j);
    for (size_t s : graph_.outputs) ++reads[s];
    std::vector<int64_t> fuse(graph_.nodes.size(), -1);
    bool any = false;
    for (size_t k = 0; k < graph_.nodes.size(); ++k) {
      const detail::PlanNode& add = graph_.nodes[k];
      const size_t out = inputs.size() + k;
      if (dynamic_cast<const Add*>(graph_.layers[add.layer].get()) == nullptr ||
          add.inputs.size() != 2 || add.inputs[0] == add.inputs[1] || reads[out] != 1 ||
          reader[out] < 0 ||
          !detail::is_relu_layer(*graph_.layers[graph_.nodes[size_t(reader[out])].layer]))
        continue;
      for (size_t s : add.inputs) {
        if (s < inputs.size() || reads[s] != 1) continue;
        const size_t j = s - inputs.size();  // node j made slot s
        const auto* bn =
            dynamic_cast<const BatchNormalization*>(graph_.layers[graph_.nodes[j].layer].get());
        if (bn == nullptr || !bn->trainable() || fuse[j] != -1 ||
            (!plan->fuse_bn_relu.empty() && plan->fuse_bn_relu[j]))
          continue;
        fuse[k] = static_cast<int64_t>(j);
        fuse[j] = detail::Plan::kBuiltByItsAdd;
        any = true;
        break;
      }
    }
    if (any) plan->fuse_bn_add_relu = std::move(fuse);
  }
  // f16 gradients underflow: fit's step scales the loss (Keras wraps the optimizer of a
  // mixed_float16 model in a LossScaleOptimizer the same way); bf16 has f32's range.
  if (optimizer_ && any_f16) {
    plan->loss_scale = plan->state.size();
    plan->state.push_back({"optimizer/loss_scale",
                           {},
                           Initializer::constant(detail::kInitialLossScale),
                           false,
                           -1,
                           {}});
    plan->loss_scale_good_steps = plan->state.size();
    plan->state.push_back(
        {"optimizer/loss_scale_good_steps", {}, Initializer::zeros(), false, -1, {}});
  }
  if (optimizer_) {
    plan->learning_rate = plan->state.size();
    plan->state.push_back({"optimizer/learning_rate",
                           {},
                           Initializer::constant(optimizer_->learning_rate().at(0)),
                           false,
                           -1,
                           {}});
    plan->iterations = plan->state.size();  // the last state variable
    plan->state.push_back({"optimizer/iterations", {}, Initializer::zeros(), false, -1, {}});
  }
  plan->optimizer = optimizer_;
  plan->loss = loss_;
  for (double w : config_.loss_weights) plan->loss_weights.push_back(static_cast<float>(w));
  plan->metrics.assign(metrics_.begin(), metrics_.end());
  plan->seed = config_.seed;
  plan->device_scopes = scopes_at_compile_;
  if (config_.log_device_placement) plan->compile.log_device_placement = true;
  if (!config_.use_capture) plan->compile.use_capture = false;
  if (config_.device == "auto") plan->compile.auto_device = true;
  output_shapes_ = std::move(output_shapes);
  plan_ = std::move(plan);
}

inline std::vector<std::string> Model::output_names() const {
  if (sequential_) return {layers_.empty() ? std::string("output") : layers_.back()->name()};
  const detail::FunctionalGraph& g = graph_;
  std::vector<std::string> out;
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const size_t s = g.outputs[k];
    std::string n = s < g.inputs.size() ? g.input_names[s]
                                        : g.layers[g.nodes[s - g.inputs.size()].layer]->name();
    while (std::find(out.begin(), out.end(), n) != out.end()) n += "_" + std::to_string(k);
    out.push_back(n);
  }
  return out;
}

inline std::vector<Value> Model::operator()(const std::vector<Value>& inputs, bool training) {
  if (detail::active_tape == nullptr)
    throw Error(DLRT_FAILED_PRECONDITION,
                name_ +
                    ": called on graph values outside a step function; a model is called on "
                    "Values inside nn::TrainStep's function (train_step.hpp), on "
                    "SymbolicTensors through its layers, or on data with predict()");
  return detail::active_tape->call_model(*this, inputs, training);
}

inline Sequential* Model::as_sequential() {
  return sequential_ ? static_cast<Sequential*>(this) : nullptr;
}

inline void Model::summary(std::ostream& out) const {
  if (sequential_) sequential_summary(out);
  else functional_summary(out);
}

inline void Model::sequential_summary(std::ostream& out) const {
  if (!input_ && !plan_)
    throw Error(DLRT_FAILED_PRECONDITION, "summary: " + name_ +
                                              " is not built; give it an Input "
                                              "layer or fit() it first");
  // Keras' print_summary for sequential models: 65 columns, fields cut at 29, 55, 65, the
  // last character before each next field a space.
  const std::vector<size_t> positions = {29, 55, 65};
  auto row = [&](const std::vector<std::string>& fields) {
    detail::summary_row(out, fields, positions);
  };
  auto commas = [](int64_t v) { return detail::with_commas(v); };
  out << "Model: \"" << name_ << "\"\n" << std::string(65, '_') << "\n";
  row({"Layer (type)", "Output Shape", "Param #"});
  out << std::string(65, '=') << "\n";
  Shape shape = plan_ ? plan_->input : *input_;
  int64_t trainable = 0, frozen = 0;
  for (size_t l = 0; l < layers_.size(); ++l) {
    int64_t count = 0;
    for (const ParamSpec& p : layers_[l]->params(shape)) {
      count += element_count(p.dims);
      (p.trainable && layers_[l]->trainable() ? trainable : frozen) += element_count(p.dims);
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

inline void Model::functional_summary(std::ostream& out) const {
  // Keras' print_summary for functional models: 98 columns, fields cut at 32, 53, 65, 98;
  // Input layers first, then every layer once in call order. "Connected to" names each
  // input of each call as layer[call][output]; a layer called several times (shared) lists
  // every call's inputs, one per line, and its output shape is "multiple" when they differ.
  const std::vector<size_t> positions = {32, 53, 65, 98};
  const detail::FunctionalGraph& g = graph_;
  out << "Model: \"" << name_ << "\"\n" << std::string(98, '_') << "\n";
  detail::summary_row(out, {"Layer (type)", "Output Shape", "Param #", "Connected to"}, positions);
  out << std::string(98, '=') << "\n";
  const size_t rows = g.inputs.size() + g.layers.size();
  size_t printed = 0;
  auto rule = [&] { out << std::string(98, ++printed == rows ? '=' : '_') << "\n"; };
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    detail::summary_row(
        out, {g.input_names[i] + " (InputLayer)", shape_string(g.inputs[i]), "0", "[]"}, positions);
    rule();
  }
  int64_t trainable = 0, frozen = 0;
  for (size_t l = 0; l < g.layers.size(); ++l) {
    std::vector<std::string> connected;
    std::string shape;
    int64_t count = 0;
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      const detail::PlanNode& n = g.nodes[k];
      if (n.layer != l) continue;
      const std::string mine = shape_string(g.slot_shapes[g.inputs.size() + k]);
      shape = shape.empty() || shape == mine ? mine : "multiple";
      for (size_t s : n.inputs) connected.push_back(g.slot_name(s));
      if (n.call != 0) continue;
      std::vector<Shape> in;
      for (size_t s : n.inputs) in.push_back(g.slot_shapes[s]);
      for (const ParamSpec& p : g.layers[l]->params_multi(in)) {
        count += element_count(p.dims);
        (p.trainable && g.layers[l]->trainable() ? trainable : frozen) += element_count(p.dims);
      }
    }
    const Layer& layer = *g.layers[l];
    detail::summary_row(out,
                        {layer.name() + " (" + layer.type() + ")", shape, std::to_string(count),
                         connected.empty() ? "" : connected[0]},
                        positions);
    for (size_t c = 1; c < connected.size(); ++c)
      detail::summary_row(out, {"", "", "", connected[c]}, positions);
    rule();
  }
  out << "Total params: " << detail::with_commas(trainable + frozen) << "\n"
      << "Trainable params: " << detail::with_commas(trainable) << "\n"
      << "Non-trainable params: " << detail::with_commas(frozen) << "\n"
      << std::string(98, '_') << "\n";
}

inline History Model::fit_of(const detail::ArrayRefs& xs, const detail::ArrayRefs& ys,
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
      set_learning_rate(static_cast<int64_t>(steps_taken) + global_step, &written_rate);
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
inline void Model::fit_prepare(const detail::ArrayRefs& xs, const detail::ArrayRefs& ys,
                               int64_t batch) {
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

inline Logs Model::train_on_batch_of(const detail::ArrayRefs& xs, const detail::ArrayRefs& ys) {
  check_data(xs, &ys, "train_on_batch");
  const int64_t n = xs[0]->rows();
  fit_prepare(xs, ys, n);  // xs and ys are the training set of this one step
  const uint64_t steps_taken = static_cast<uint64_t>(
      session().graph().read_variable<float>(session().vars()[plan_->iterations]).at(0));
  if (strategy_) replicas_->set_run_count(steps_taken);
  else session_->train_executable().set_run_count(steps_taken);
  float written_rate = std::numeric_limits<float>::quiet_NaN();
  set_learning_rate(static_cast<int64_t>(steps_taken), &written_rate);
  std::vector<int32_t> rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  const std::vector<double> r =
      strategy_ ? replicas_->train_step(rows.data(), n) : session_->train_step(rows.data(), n);
  // The step's losses are means over its rows already; the counts are divided here.
  return logs_of(r, 1.0, static_cast<double>(n));
}

inline Logs Model::evaluate_of(const detail::ArrayRefs& xs, const detail::ArrayRefs& ys,
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

inline Array Model::predict(const Array& x, int64_t batch_size) {
  if (num_outputs() != 1)
    throw Error(DLRT_INVALID_ARGUMENT,
                "predict: " + name_ + " has " + std::to_string(num_outputs()) + " outputs (" +
                    joined(output_names()) +
                    "); predict a std::vector<Array> (one per input) to get them all");
  return predict_of({&x}, batch_size).at(0);
}

inline std::vector<Array> Model::predict_of(const detail::ArrayRefs& xs, int64_t batch_size) {
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

inline void Model::save_onnx(const std::string& path, dlrt_dtype input_dtype) {
  check_plain_inputs_outputs("save_onnx");
  session().save_onnx(path, input_dtype);
}

inline std::vector<Model::NamedValue> Model::state() { return replica_state(0); }

inline std::vector<Model::NamedValue> Model::replica_state(size_t replica) {
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

inline void Model::set_state(const std::vector<NamedValue>& values) {
  plan();
  for (detail::Session* s : all_sessions()) set_state_of(*s, values);
}

inline void Model::set_state_of(detail::Session& s, const std::vector<NamedValue>& values) {
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
