// dlrt/nn/tape.hpp: Tape, what a custom step's function builds with (train_step.hpp runs it):
// the run's feeds as placeholders, ops, losses, the models called on graph Values, and
// minimize. A tape lives only while its TrainStep traces the function, and writes into that
// trace's graph; the step owns everything the tape makes.
#ifndef DLRT_NN_TAPE_HPP_
#define DLRT_NN_TAPE_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/losses.hpp"
#include "dlrt/nn/model.hpp"
#include "dlrt/nn/optimizers.hpp"

namespace dlrt::nn {

class TrainStep;
namespace detail {
struct StepTrace;  // one trace of the step function (libdlrt_nn's nn/step_trace.hpp)
}

// What a step function builds with: its inputs, ops, losses and the updates (minimize). Only
// valid during the call of the function (while the step is traced; under a strategy, once
// per local replica, each tape building its replica's graph).
class Tape : private detail::ModelCaller {
 public:
  Graph& graph() { return *graph_; }
  // The placeholder fed by run()'s feed `name` (its dtype and shape: under a strategy, this
  // replica's rows). INVALID_ARGUMENT naming it and the feeds when the run has no such feed.
  Value input(const std::string& name);
  // Any op of docs/ops.md: the first output of `op` on `inputs`.
  Value op(const std::string& op_name, const std::vector<Value>& inputs,
           const OpAttrs& attrs = {}) {
    return graph_->op1(op_name, inputs, attrs);
  }
  Value constant(float v) { return graph_->constant<float>("", {}, {v}); }
  Value mean(Value x) { return op("reduce_mean", {x}); }
  Value sum(Value x) { return op("reduce_sum", {x}); }
  Value stop_gradient(Value x) { return op("stop_gradient", {x}); }
  Value ones_like(Value x) { return fill_like(x, 1.0); }
  Value zeros_like(Value x) { return fill_like(x, 0.0); }
  // N(mean 0, stddev) of shape `dims`, drawn anew every run (the reparameterisation trick).
  Value random_normal(const std::vector<int64_t>& dims, double stddev = 1.0);
  // `loss` as fit computes it: the mean over the batch (dim 0) of loss.per_sample(y_pred,
  // y_true), y_true prepared as the loss does (labels to i32). Bit for bit fit's loss.
  Value loss(const Loss& loss, Value y_true, Value y_pred);
  // Adds `optimizer`'s update of every variable of `variables` by the gradient of `loss` (a
  // float scalar) to the step; each run applies it. `name` names the optimizer's variables
  // ("optimizer", "optimizer_1", ... by default, in the order of the minimize calls).
  void minimize(Value loss, const Optimizer& optimizer, const std::vector<Variable>& variables,
                const std::string& name = "");
  // The step's copy of a model's variable (to read it in a custom loss, e.g. a penalty).
  Value variable(const Variable& v);
  // Under a strategy: this tape's replica (0 .. replicas in sync - 1) and their number;
  // 0 and 1 without one.
  uint64_t replica() const;
  int64_t replicas_in_sync() const;

 private:
  friend class TrainStep;
  Tape(TrainStep& step, detail::StepTrace& trace);
  std::vector<Value> call_model(Model& model, const std::vector<Value>& inputs,
                                bool training) override;
  Value fill_like(Value x, double v) {
    const std::vector<int64_t> d = x.dims();
    return graph_->op1("fill", {}, {{"shape", d}, {"value", v}, {"dtype", x.dtype()}});
  }
  // Replica 0 keeps `seed` (what one device draws); the others draw their own.
  uint64_t salted(uint64_t seed) const;

  TrainStep& step_;
  detail::StepTrace& trace_;
  Graph* graph_;
  int random_draws_ = 0;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_TAPE_HPP_
