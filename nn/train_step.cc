// train_step.cc: TrainStep — making a step, lending the models' weights, running it and its
// results (dlrt/nn/train_step.hpp).
#include "dlrt/nn/train_step.hpp"

#include <iostream>

#include "replicated.hpp"
#include "step_trace.hpp"

namespace dlrt::nn {

TrainStep::TrainStep(const Context& ctx, StepFunction fn, StepOptions options)
    : ctx_(ctx), fn_(std::move(fn)), options_(std::move(options)) {
  if (!fn_) throw Error(DLRT_INVALID_ARGUMENT, "TrainStep: the step function is empty");
  if (!options_.strategy) options_.strategy = detail::current_strategy();
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

TrainStep::~TrainStep() {
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

std::vector<Model::NamedValue> TrainStep::state(size_t replica) {
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

Executable& TrainStep::executable() {
  if (traces_.empty()) throw Error(DLRT_FAILED_PRECONDITION, "TrainStep: it has not run yet");
  return traces_.front()->runner->exe;
}

bool TrainStep::computes_f16() const {
  for (const Binding& b : bindings_)
    for (dlrt_dtype d : b.plan->compute_dtype)
      if (d == DLRT_F16) return true;
  return false;
}

TrainStep::Trace& TrainStep::primary() { return *traces_.front(); }

const std::vector<Value>* TrainStep::primary_vars(size_t k) {
  if (traces_.empty() || traces_.front()->model_vars.size() <= k) return nullptr;
  const std::vector<Value>& v = traces_.front()->model_vars[k];
  return v.empty() ? nullptr : &v;
}

void TrainStep::give_back(Model& model) {
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

void TrainStep::detach(Model& model) { bindings_[binding_index(model)].model = nullptr; }

void TrainStep::lend_from_models() {
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

size_t TrainStep::binding_index(Model& model) const {
  for (size_t k = 0; k < bindings_.size(); ++k)
    if (bindings_[k].model == &model) return k;
  throw Error(DLRT_INTERNAL, "TrainStep: model " + model.name() + " is not bound to it");
}

std::vector<size_t> TrainStep::layer_state(const detail::Plan& p) {
  std::vector<size_t> out;
  for (const auto& ids : p.layer_state) out.insert(out.end(), ids.begin(), ids.end());
  return out;
}

Value TrainStep::make_variable(Trace& t, const std::string& name, const Shape& dims, bool trainable,
                               double init) {
  Value v = t.graph->variable(name, DLRT_F32, dims, "fill", {{"value", init}}, trainable);
  t.variables.push_back({name, v});
  return v;
}

// One run under a strategy: every replica's grads on its rows, one all-reduce of the scalar
// results, gradients and moving statistics, then every replica's apply from the sums.
void TrainStep::run_replicas(const std::vector<Feed>& feeds) {
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
    for (size_t k = 0; k < t.reduced_feeds.size(); ++k)
      in.push_back(&t.runner->fetches[results + k]);
    t.apply->exe.run(in, t.apply->fetches);
  });
}

// Worker 0's replica 0 variables into every replica of every worker (several workers only:
// the local replicas were all written from the same values).
void TrainStep::sync_from_chief() {
  if (!mirrored() || strategy_->num_workers() <= 1) return;
  std::vector<detail::ReplicaVariables> replicas;
  for (size_t r = 0; r < traces_.size(); ++r) {
    detail::ReplicaVariables v{traces_[r]->graph.get(), {}, ctx_.find_device(devices_[r])};
    for (const auto& [name, value] : traces_[r]->variables) v.variables.push_back(value);
    replicas.push_back(std::move(v));
  }
  detail::broadcast_from_chief(ctx_, *strategy_, replicas);
}

Logs TrainStep::run(const std::vector<Feed>& feeds) {
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
                  "TrainStep: model " +
                      bindings_[k].prefix.substr(0, bindings_[k].prefix.size() - 1) +
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

Array TrainStep::output(const std::string& name) {
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
  throw Error(DLRT_NOT_FOUND,
              "TrainStep::output: no result '" + name + "' of a run" +
                  (names.empty() ? " (the step has not run)" : " (results: " + names + ")"));
}

}  // namespace dlrt::nn
