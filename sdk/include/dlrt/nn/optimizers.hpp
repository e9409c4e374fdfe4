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
  virtual ~Optimizer();  // defined in the library: one home for the vtable
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
  Optimizer& set_global_clipnorm(double clipnorm);
  double global_clipnorm() const { return global_clipnorm_; }

  // The whole step's updates: every params[k] by grads[k] with its slots[k], after clipping
  // by global norm when set. The one entry point the training steps call (session.hpp).
  //
  // `apply_if` (a bool scalar, or none): the updates take effect only where it is true —
  // every assign becomes where(apply_if, new, old), so a false step leaves variables and
  // slots as they were (dynamic loss scaling's skipped step, LossScale below).
  void apply_all(Graph& g, const std::vector<Value>& params, std::vector<Value> grads,
                 const std::vector<std::vector<Value>>& slots, Value step, Value learning_rate,
                 Value apply_if = {}) const;

 protected:
  // ", global_clipnorm=1" when clipping, for config().
  std::string clip_config() const;
  static std::string num(double v);
  // What apply() uses instead of g.assign: the update, or under apply_all's `apply_if` the
  // update where it holds and the old value elsewhere.
  void assign(Graph& g, Value var, Value update) const;
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
                double epsilon = 1e-7);
  std::unique_ptr<Optimizer> clone() const override;
  std::string name() const override;
  std::string config() const override;
  std::vector<std::string> slot_names() const override;
  void apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value step,
             Value learning_rate) const override;

 protected:
  // The update of `param` starting from the weight `from` (param itself, or AdamW's decayed
  // weight); the result is assigned to `param`.
  void apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value step,
             Value learning_rate, Value from) const;

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
                 double beta_1 = 0.9, double beta_2 = 0.999, double epsilon = 1e-7);
  std::unique_ptr<Optimizer> clone() const override;
  std::string name() const override;
  std::string config() const override;
  void apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value step,
             Value learning_rate) const override;

 private:
  double wd_;
};

// SGD(learning_rate = 0.01, momentum = 0, nesterov = false), as Keras. The velocity slot
// exists even without momentum (sgd_update takes one; it then stays zero).
class SGD : public Optimizer {
 public:
  explicit SGD(LearningRate learning_rate = 0.01, double momentum = 0.0, bool nesterov = false);
  std::unique_ptr<Optimizer> clone() const override;
  std::string name() const override;
  std::string config() const override;
  std::vector<std::string> slot_names() const override;
  void apply(Graph& g, Value param, Value grad, const std::vector<Value>& slots, Value /*step*/,
             Value learning_rate) const override;

 private:
  double momentum_;
  bool nesterov_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_OPTIMIZERS_HPP_
