// dlrt/nn/optimizers.hpp: Adam and SGD as graph builders of in-place updates.
//
// For every trainable variable p with gradient g the optimizer adds its fused update op
// (docs/ops.md: adam_update, sgd_update) and assigns its outputs back to p and to p's slots,
// so the executor runs the update in place on p's device. Slots are non-trainable variables
// named "<p>/<slot>" ("dense/kernel/m"), zeros at first, colocated with p by the graph. The
// model owns two more variables: "optimizer/iterations" (f32 scalar, the number of steps
// done), which each training step advances by one before the updates read it (Adam's bias
// correction needs the 1-based step, and checkpoints record it), and
// "optimizer/learning_rate" (f32 scalar), the rate every update reads, which fit sets from
// the optimizer's LearningRate (a constant or a schedule, schedules.hpp) before each step.
#ifndef DLRT_NN_OPTIMIZERS_HPP_
#define DLRT_NN_OPTIMIZERS_HPP_

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/schedules.hpp"

namespace dlrt::nn {

class Optimizer {
 public:
  explicit Optimizer(LearningRate learning_rate) : lr_(std::move(learning_rate)) {}
  virtual ~Optimizer() = default;
  // The rate (constant or schedule) fit writes into "optimizer/learning_rate" before each step.
  const LearningRate& learning_rate() const { return lr_; }
  virtual std::unique_ptr<Optimizer> clone() const = 0;
  virtual std::string name() const = 0;  // "adam", "sgd"
  // Keras-style description for checkpoint metadata: "Adam(learning_rate=0.001, ...)".
  virtual std::string config() const = 0;
  // The slots each trainable variable gets, in the order apply() takes them.
  virtual std::vector<std::string> slot_names() const = 0;
  // Adds the update of `param` by `grad` and assigns it back. `step` is this step's 1-based
  // number (f32 scalar, already advanced); `learning_rate` the f32 scalar rate of this step.
  virtual void apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value step,
                     Value learning_rate) const = 0;

 protected:
  static std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }
  LearningRate lr_;
};

// Adam(learning_rate = 0.001, beta_1 = 0.9, beta_2 = 0.999, epsilon = 1e-7), as Keras; the
// learning rate a constant or a schedule.
class Adam : public Optimizer {
 public:
  explicit Adam(LearningRate learning_rate = 1e-3, double beta_1 = 0.9, double beta_2 = 0.999,
                double epsilon = 1e-7)
      : Optimizer(std::move(learning_rate)), b1_(beta_1), b2_(beta_2), eps_(epsilon) {
    if (!(b1_ >= 0 && b1_ < 1) || !(b2_ >= 0 && b2_ < 1))
      throw Error(DLRT_INVALID_ARGUMENT, "Adam: beta_1 and beta_2 must be in [0, 1)");
    if (!(eps_ > 0)) throw Error(DLRT_INVALID_ARGUMENT, "Adam: epsilon must be > 0");
  }
  std::unique_ptr<Optimizer> clone() const override { return std::make_unique<Adam>(*this); }
  std::string name() const override { return "adam"; }
  std::string config() const override {
    return "Adam(learning_rate=" + lr_.config() + ", beta_1=" + num(b1_) + ", beta_2=" + num(b2_) +
           ", epsilon=" + num(eps_) + ")";
  }
  std::vector<std::string> slot_names() const override { return {"m", "v"}; }
  void apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value step,
             Value learning_rate) const override {
    // (param, grad, m, v, step, learning_rate) -> (param, m, v), each output over its input.
    std::vector<Value> out =
        g.op("adam_update", {param, grad, slots[0], slots[1], step, learning_rate},
             {{"beta1", b1_}, {"beta2", b2_}, {"epsilon", eps_}});
    g.assign(param, out[0]);
    g.assign(slots[0], out[1]);
    g.assign(slots[1], out[2]);
  }

 private:
  double b1_, b2_, eps_;
};

// SGD(learning_rate = 0.01, momentum = 0, nesterov = false), as Keras. The velocity slot
// exists even without momentum (sgd_update takes one; it then stays zero).
class SGD : public Optimizer {
 public:
  explicit SGD(LearningRate learning_rate = 0.01, double momentum = 0.0, bool nesterov = false)
      : Optimizer(std::move(learning_rate)), momentum_(momentum), nesterov_(nesterov) {
    if (!(momentum_ >= 0)) throw Error(DLRT_INVALID_ARGUMENT, "SGD: momentum must be >= 0");
  }
  std::unique_ptr<Optimizer> clone() const override { return std::make_unique<SGD>(*this); }
  std::string name() const override { return "sgd"; }
  std::string config() const override {
    return "SGD(learning_rate=" + lr_.config() + ", momentum=" + num(momentum_) +
           ", nesterov=" + (nesterov_ ? "True" : "False") + ")";
  }
  std::vector<std::string> slot_names() const override { return {"velocity"}; }
  void apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value /*step*/,
             Value learning_rate) const override {
    std::vector<Value> out = g.op("sgd_update", {param, grad, slots[0], learning_rate},
                                  {{"momentum", momentum_}, {"nesterov", nesterov_}});
    g.assign(param, out[0]);
    g.assign(slots[0], out[1]);
  }

 private:
  double momentum_;
  bool nesterov_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_OPTIMIZERS_HPP_
