// train_step_trace.cc: TrainStep's traces — the step function called on a tape over a new
// graph, per replica, and compiled (dlrt/nn/train_step.hpp).
#include "dlrt/nn/train_step.hpp"

#include <set>

#include "step_trace.hpp"

namespace dlrt::nn {

void TrainStep::check_feeds(const std::vector<Feed>& feeds) const {
  std::set<std::string> seen;
  for (const Feed& f : feeds) {
    if (!seen.insert(f.name).second)
      throw Error(DLRT_INVALID_ARGUMENT, "TrainStep: feed '" + f.name + "' is given twice");
    if (!mirrored()) continue;
    const std::vector<int64_t> d = f.array->dims();
    if (d.empty() || d[0] % in_sync_ != 0 || d[0] == 0)
      throw Error(DLRT_INVALID_ARGUMENT,
                  "TrainStep: feed '" + f.name + "' is " + dims_string(d) +
                      "; under the strategy every feed is split on dim 0 over " +
                      std::to_string(in_sync_) +
                      " replicas, so its rows must be a positive "
                      "multiple of " +
                      std::to_string(in_sync_));
  }
}

void TrainStep::build_trace(const std::vector<Feed>& feeds) {
  for (const Binding& b : bindings_)
    if (b.model == nullptr)
      throw Error(DLRT_FAILED_PRECONDITION,
                  "TrainStep: model " + b.prefix.substr(0, b.prefix.size() - 1) +
                      " was compiled again or destroyed since the step used it; make a new step");
  check_feeds(feeds);
  // The new traces replace the old only when every one is built: on any error the step, and
  // the models' variables in it, stay as they were.
  std::vector<std::unique_ptr<Trace>> fresh;
  const size_t replicas = mirrored() ? devices_.size() : 1;
  for (size_t r = 0; r < replicas; ++r) fresh.push_back(trace_replica(feeds, r));
  // A retrace: the values of the last trace carry over to the variables of the same names.
  if (!traces_.empty()) {
    const std::map<std::string, Model::NamedValue> values = read_values(primary());
    for (auto& t : fresh)
      for (const auto& [name, v] : t->variables) {
        auto it = values.find(name);
        if (it != values.end() && it->second.dims == v.dims())
          t->graph->write_variable(v, it->second.values);
      }
  }
  traces_ = std::move(fresh);
}

// Calls the step function on a tape over a new graph: replica `replica`'s under a strategy.
std::unique_ptr<detail::StepTrace> TrainStep::trace_replica(const std::vector<Feed>& feeds,
                                                            size_t replica) {
  auto t = std::make_unique<Trace>();
  t->graph = std::make_unique<Graph>(ctx_);
  t->replica = replica;
  Graph& g = *t->graph;
  std::unique_ptr<dlrt::DeviceScope> scope;
  if (mirrored()) {
    t->global_replica = static_cast<uint64_t>(strategy_->rank()) * devices_.size() + replica;
    scope = std::make_unique<dlrt::DeviceScope>(g, devices_[replica]);
  } else if (!options_.device.empty() && options_.device != "auto") {
    scope = std::make_unique<dlrt::DeviceScope>(g, options_.device);
  }
  for (const Feed& f : feeds) {
    std::vector<int64_t> dims = f.array->dims();
    t->feed_names.push_back(f.name);
    t->dtypes.push_back(f.array->dtype());
    t->dims.push_back(dims);
    if (mirrored()) dims[0] /= in_sync_;
    t->placeholders.push_back(g.placeholder(f.name, f.array->dtype(), dims));
  }
  Tape tape(*this, *t);
  StepMetrics results;
  {
    detail::ModelCaller* outer = detail::active_tape();
    detail::active_tape() = &tape;
    struct Restore {
      detail::ModelCaller* outer;
      ~Restore() { detail::active_tape() = outer; }
    } restore{outer};
    results = fn_(tape);
  }
  for (const std::string& n : t->feed_names)
    if (!t->read.count(n))
      throw Error(DLRT_INVALID_ARGUMENT,
                  "TrainStep: feed '" + n + "' is not read by the step function (Tape::input)");
  compile_trace(*t, results);
  return t;
}

// The trace's fetches and executables: one step, or under a strategy grads and apply.
void TrainStep::compile_trace(Trace& t, const StepMetrics& results) {
  Graph& g = *t.graph;
  const float inv = 1.f / static_cast<float>(in_sync_);
  for (const auto& [name, u] : t.state_updates) {
    if (!mirrored()) {
      g.assign(u.first, u.second);
      continue;
    }
    // The replicas' new moving statistics are summed too; apply sets their mean.
    t.reduced_values.push_back(u.second);
    t.reduced_names.push_back("apply/sum_" + std::to_string(t.reduced_feeds.size()));
    t.reduced_feeds.push_back(g.placeholder(t.reduced_names.back(), DLRT_F32, u.second.dims()));
    Value mean = g.op1("mul", {t.reduced_feeds.back(), g.constant<float>("", {}, {inv})});
    if (!t.apply_fetch) t.apply_fetch = mean;
    g.assign(u.first, mean);
  }
  std::vector<Value> fetches;
  for (const auto& [name, v] : results) {
    if (!v) throw Error(DLRT_INVALID_ARGUMENT, "TrainStep: result '" + name + "' has no value");
    for (const std::string& n : t.metric_names)
      if (n == name)
        throw Error(DLRT_INVALID_ARGUMENT, "TrainStep: result '" + name + "' is returned twice");
    t.metric_names.push_back(name);
    t.scalar.push_back(v.dims().empty() && v.dtype() == DLRT_F32);
    fetches.push_back(v);
  }
  if (fetches.empty() && t.optimizers.empty() && t.state_updates.empty())
    throw Error(DLRT_INVALID_ARGUMENT,
                "TrainStep: the step function returns no metrics and updates nothing");
  const bool updates = !t.optimizers.empty() || !t.state_updates.empty();
  fetches.insert(fetches.end(), t.reduced_values.begin(), t.reduced_values.end());
  dlrt::CompileOptions o;
  o.run_assigns = updates && !mirrored();
  if (options_.log_device_placement) o.log_device_placement = true;
  if (!options_.use_capture) o.use_capture = false;
  if (options_.device == "auto") o.auto_device = true;
  t.runner = std::make_unique<detail::Runner>(ctx_, g, t.placeholders, t.feed_names, fetches, o);
  if (mirrored() && updates) {
    o.run_assigns = true;
    t.apply = std::make_unique<detail::Runner>(ctx_, g, t.reduced_feeds, t.reduced_names,
                                               std::vector<Value>{t.apply_fetch}, o);
  }
}

}  // namespace dlrt::nn
