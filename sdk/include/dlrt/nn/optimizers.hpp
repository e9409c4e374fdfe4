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
//
// Every optimizer may clip by global norm first (Keras' `global_clipnorm`): with
// set_global_clipnorm(c), the gradients of one step are scaled together by
// c / max(c, sqrt(sum of every gradient's squared elements)), all inside the compiled step.
// AdamW is Adam with decoupled weight decay (Loshchilov & Hutter; Keras' and PyTorch's AdamW):
// p <- p - learning_rate * weight_decay * p, then Adam's update of that p.
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

  // Clip by global norm (Keras' global_clipnorm; 0, the default, does not clip). Returns this
  // optimizer so it chains: `nn::Adam(1e-3).set_global_clipnorm(1.0)`.
  Optimizer& set_global_clipnorm(double clipnorm) {
    if (!(clipnorm >= 0))
      throw Error(DLRT_INVALID_ARGUMENT,
                  "global_clipnorm must be >= 0 (0: no clipping), got " + num(clipnorm));
    global_clipnorm_ = clipnorm;
    return *this;
  }
  double global_clipnorm() const { return global_clipnorm_; }

  // The whole step's updates: every params[k] by grads[k] with its slots[k], after clipping
  // by global norm when set. The one entry point the training steps call (session.hpp).
  //
  // `apply_if` (a bool scalar, or none): the updates take effect only where it is true —
  // every assign becomes where(apply_if, new, old), so a false step leaves variables and
  // slots as they were (dynamic loss scaling's skipped step, LossScale below).
  void apply_all(Graph& g, const std::vector<Value>& params, std::vector<Value> grads,
                 const std::vector<std::vector<Value>>& slots, Value step, Value learning_rate,
                 Value apply_if = {}) const {
    apply_if_ = apply_if;
    if (global_clipnorm_ > 0 && !grads.empty()) {
      // factor = c / max(norm, c): 1 while the norm is within c, else c / norm.
      Value sum;
      for (const Value& gr : grads) {
        Value sq = g.op1("reduce_sum", {g.op1("square", {gr})});
        sum = sum ? g.op1("add", {sum, sq}) : sq;
      }
      Value c = g.constant<float>("", {}, {static_cast<float>(global_clipnorm_)});
      Value factor = g.op1("div", {c, g.op1("maximum", {g.op1("sqrt", {sum}), c})});
      for (Value& gr : grads) gr = g.op1("mul", {gr, factor});
    }
    for (size_t k = 0; k < params.size(); ++k)
      apply(g, params[k], grads[k], slots[k], step, learning_rate);
    apply_if_ = Value();
  }

 protected:
  // ", global_clipnorm=1" when clipping, for config().
  std::string clip_config() const {
    return global_clipnorm_ > 0 ? ", global_clipnorm=" + num(global_clipnorm_) : "";
  }
  static std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }
  // What apply() uses instead of g.assign: the update, or under apply_all's `apply_if` the
  // update where it holds and the old value elsewhere.
  void assign(Graph& g, Value var, Value update) const {
    g.assign(var, apply_if_ ? g.op1("where", {apply_if_, update, var}) : update);
  }
  LearningRate lr_;
  double global_clipnorm_ = 0.0;

 private:
  mutable Value apply_if_;  // set for the duration of one apply_all
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
           ", epsilon=" + num(eps_) + clip_config() + ")";
  }
  std::vector<std::string> slot_names() const override { return {"m", "v"}; }
  void apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value step,
             Value learning_rate) const override {
    apply(g, param, grad, slots, step, learning_rate, param);
  }

 protected:
  // The update of `param` starting from the weight `from` (param itself, or AdamW's decayed
  // weight); the result is assigned to `param`.
  void apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value step,
             Value learning_rate, Value from) const {
    // (param, grad, m, v, step, learning_rate) -> (param, m, v), each output over its input.
    std::vector<Value> out =
        g.op("adam_update", {from, grad, slots[0], slots[1], step, learning_rate},
             {{"beta1", b1_}, {"beta2", b2_}, {"epsilon", eps_}});
    assign(g, param, out[0]);
    assign(g, slots[0], out[1]);
    assign(g, slots[1], out[2]);
  }

 protected:
  double b1_, b2_, eps_;
};

// AdamW(learning_rate = 0.001, weight_decay = 0.004, beta_1 = 0.9, beta_2 = 0.999,
// epsilon = 1e-7), as Keras' AdamW (PyTorch's default weight_decay is 0.01): every trainable
// variable decays by learning_rate * weight_decay before Adam's update, the rate of this step
// (a schedule moves the decay with it, as in both).
class AdamW : public Adam {
 public:
  explicit AdamW(LearningRate learning_rate = 1e-3, double weight_decay = 0.004,
                 double beta_1 = 0.9, double beta_2 = 0.999, double epsilon = 1e-7)
      : Adam(std::move(learning_rate), beta_1, beta_2, epsilon), wd_(weight_decay) {
    if (!(wd_ >= 0)) throw Error(DLRT_INVALID_ARGUMENT, "AdamW: weight_decay must be >= 0");
  }
  std::unique_ptr<Optimizer> clone() const override { return std::make_unique<AdamW>(*this); }
  std::string name() const override { return "adamw"; }
  std::string config() const override {
    return "AdamW(learning_rate=" + lr_.config() + ", weight_decay=" + num(wd_) +
           ", beta_1=" + num(b1_) + ", beta_2=" + num(b2_) + ", epsilon=" + num(eps_) +
           clip_config() + ")";
  }
  void apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value step,
             Value learning_rate) const override {
    // p - p * (lr * wd): the decayed weight Adam then updates (and assigns back to p).
    Value wd = g.constant<float>("", {}, {static_cast<float>(wd_)});
    Value decayed = g.op1("sub", {param, g.op1("mul", {param, g.op1("mul", {learning_rate, wd})})});
    Adam::apply(g, param, grad, slots, step, learning_rate, decayed);
  }

 private:
  double wd_;
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
           ", nesterov=" + (nesterov_ ? "True" : "False") + clip_config() + ")";
  }
  std::vector<std::string> slot_names() const override { return {"velocity"}; }
  void apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value /*step*/,
             Value learning_rate) const override {
    std::vector<Value> out = g.op("sgd_update", {param, grad, slots[0], learning_rate},
                                  {{"momentum", momentum_}, {"nesterov", nesterov_}});
    assign(g, param, out[0]);
    assign(g, slots[0], out[1]);
  }

 private:
  double momentum_;
  bool nesterov_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_OPTIMIZERS_HPP_
