// dlrt/nn/schedules.hpp: learning-rate schedules, as Keras' keras.optimizers.schedules.
//
//   nn::Adam(nn::CosineDecay(1e-3, /*decay_steps=*/steps_per_epoch * epochs))
//   nn::SGD(nn::PiecewiseConstantDecay({32000, 48000}, {0.1, 0.01, 0.001}), 0.9)
//
// A schedule maps the optimizer's step count (0-based: the steps done before this one, Keras'
// `optimizer.iterations`) to the rate of this step. How it reaches the device: the rate is an
// input of the update ops (sgd_update / adam_update, version 2), read from the model's state
// variable "optimizer/learning_rate" (an f32 scalar, saved in checkpoints as Keras saves its
// optimizer's learning_rate). Model::fit evaluates the schedule on the host before each step
// and writes the variable when the value changes, so the compiled step is never rebuilt and a
// constant rate costs one write per fit. This is PyTorch's LR scheduler model (host-side, any
// function) with Keras' names and formulas; a schedule must be a pure function of the step so
// that a resumed fit (load_weights, initial_epoch) continues the exact curve.
//
// The rate written is rounded to f32 (the update kernels read it as f32).
#ifndef DLRT_NN_SCHEDULES_HPP_
#define DLRT_NN_SCHEDULES_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"

namespace dlrt::nn {

class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule();  // defined in the library: one home for the vtable
  // The rate of the step that follows `step` steps done (step >= 0).
  virtual double operator()(int64_t step) const = 0;
  // Keras-style description for checkpoint metadata: "CosineDecay(initial_learning_rate=...)".
  virtual std::string config() const = 0;

 protected:
  static std::string num(double v);
};

// initial * decay_rate ^ (step / decay_steps), the exponent floored when staircase.
class ExponentialDecay : public LearningRateSchedule {
 public:
  ExponentialDecay(double initial_learning_rate, int64_t decay_steps, double decay_rate,
                   bool staircase = false);
  double operator()(int64_t step) const override;
  std::string config() const override;

 private:
  double initial_;
  int64_t steps_;
  double rate_;
  bool staircase_;
};

// values[0] while step <= boundaries[0], values[i] while boundaries[i-1] < step <=
// boundaries[i], values.back() after the last boundary (Keras' rule).
class PiecewiseConstantDecay : public LearningRateSchedule {
 public:
  PiecewiseConstantDecay(std::vector<int64_t> boundaries, std::vector<double> values);
  double operator()(int64_t step) const override;
  std::string config() const override;

 private:
  std::vector<int64_t> boundaries_;
  std::vector<double> values_;
};

// Keras' CosineDecay: with warmup_steps > 0 the rate first rises linearly from
// initial_learning_rate to warmup_target over warmup_steps; then, from the peak (warmup_target,
// or initial_learning_rate without warmup), it follows
//   peak * ((1 - alpha) * 0.5 * (1 + cos(pi * min(t, decay_steps) / decay_steps)) + alpha)
// with t the steps since the warmup; after decay_steps it stays at peak * alpha.
class CosineDecay : public LearningRateSchedule {
 public:
  CosineDecay(double initial_learning_rate, int64_t decay_steps, double alpha = 0.0,
              double warmup_target = 0.0, int64_t warmup_steps = 0);
  double operator()(int64_t step) const override;
  std::string config() const override;

 private:
  double initial_;
  int64_t steps_;
  double alpha_, target_;
  int64_t warmup_;
};

// What an optimizer's learning_rate argument takes: a constant (> 0) or a schedule (copied).
// Implicit from both, as Keras' `learning_rate=` takes a float or a schedule.
class LearningRate {
 public:
  LearningRate(double constant);  // NOLINT(runtime/explicit)
  template <typename S,
            typename = std::enable_if_t<std::is_base_of_v<LearningRateSchedule, std::decay_t<S>>>>
  LearningRate(S&& schedule)  // NOLINT(runtime/explicit)
      : schedule_(std::make_shared<std::decay_t<S>>(std::forward<S>(schedule))) {}

  // The rate of the step after `step` steps done; a schedule's value must be finite and > 0.
  double at(int64_t step) const;
  bool is_schedule() const { return schedule_ != nullptr; }
  // "0.001" or the schedule's config.
  std::string config() const;

 private:
  double constant_ = 0;
  std::shared_ptr<const LearningRateSchedule> schedule_;  // shared by the optimizer's clones
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_SCHEDULES_HPP_
