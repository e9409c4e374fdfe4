// step_trace.hpp (private to libdlrt_nn): what a TrainStep holds per trace of its function
// (dlrt/nn/train_step.hpp): the graph, its feeds and variables, the optimizers and the
// executables that run it.
#ifndef DLRT_NN_STEP_TRACE_HPP_
#define DLRT_NN_STEP_TRACE_HPP_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/optimizers.hpp"
#include "dlrt/nn/runner.hpp"

namespace dlrt::nn {
namespace detail {
// A minimize of the step: the optimizer, its name and its step-count and rate variables.
struct StepOptimizer {
  std::shared_ptr<const Optimizer> optimizer;
  std::string name;
  Value iterations, learning_rate;
  int64_t steps_done = 0;  // host copy of iterations, for the rate schedule
  float written = -1.f;    // the rate last written
};

// One trace of the step function: its graph and what runs it. Without a strategy there is one,
// compiled into one executable; under a strategy one per local replica (the top of the file).
struct StepTrace {
  std::unique_ptr<Graph> graph;
  size_t replica = 0;                   // the local replica (0 without a strategy)
  uint64_t global_replica = 0;          // rank × local replicas + replica
  std::vector<std::string> feed_names;  // placeholders, in feed order
  std::vector<Value> placeholders;      // under a strategy: this replica's rows of each feed
  std::vector<dlrt_dtype> dtypes;
  std::vector<std::vector<int64_t>> dims;  // of the feeds as run() takes them (all rows)
  std::set<std::string> read;              // the feeds the function read
  std::vector<std::pair<std::string, Value>> variables;  // every step variable, by name
  std::vector<std::vector<Value>> model_vars;  // per binding: the model's variables (plan order)
  std::vector<int> calls;                      // per binding: calls in this trace
  std::vector<StepOptimizer> optimizers;
  std::set<std::string> minimized;                               // variables some optimizer updates
  std::map<std::string, std::pair<Value, Value>> state_updates;  // name -> (variable, value)
  std::vector<std::string> metric_names;  // every result, in the function's order
  std::vector<bool> scalar;               // per result: an f32 scalar (a metric of run())
  // Under a strategy: every optimizer's gradients (fetched after the results, then the new
  // moving statistics), and apply's placeholders for their sums, in the same order.
  std::vector<Value> reduced_values, reduced_feeds;
  std::vector<std::string> reduced_names;  // the feeds' names ("apply/sum_<k>")
  Value apply_fetch;                       // one value apply computes (its fetch)
  std::unique_ptr<Runner> runner;          // the step; under a strategy its grads half
  std::unique_ptr<Runner> apply;           // under a strategy: the updates from the sums

  std::vector<Value>& vars_of(size_t binding) {
    if (model_vars.size() <= binding) {
      model_vars.resize(binding + 1);
      calls.resize(binding + 1, 0);
    }
    return model_vars[binding];
  }
};
}  // namespace detail
}  // namespace dlrt::nn

#endif  // DLRT_NN_STEP_TRACE_HPP_
