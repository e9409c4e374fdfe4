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

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"

namespace dlrt::nn {

class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;
  // The rate of the step that follows `step` steps done (step >= 0).
  virtual double operator()(int64_t step) const = 0;
  // Keras-style description for checkpoint metadata: "CosineDecay(initial_learning_rate=...)".
  virtual std::string config() const = 0;

 protected:
  static std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }
};

// initial * decay_rate ^ (step / decay_steps), the exponent floored when staircase.
class ExponentialDecay : public LearningRateSchedule {
 public:
  ExponentialDecay(double initial_learning_rate, int64_t decay_steps, double decay_rate,
                   bool staircase = false)
      : initial_(initial_learning_rate),
        steps_(decay_steps),
        rate_(decay_rate),
        staircase_(staircase) {
    if (!(initial_ > 0))
      throw Error(DLRT_INVALID_ARGUMENT, "ExponentialDecay: initial_learning_rate must be > 0");
    if (steps_ < 1)
      throw Error(DLRT_INVALID_ARGUMENT, "ExponentialDecay: decay_steps must be >= 1");
    if (!(rate_ > 0))
      throw Error(DLRT_INVALID_ARGUMENT, "ExponentialDecay: decay_rate must be > 0");
  }
  double operator()(int64_t step) const override {
    double p = static_cast<double>(step) / static_cast<double>(steps_);
    if (staircase_) p = std::floor(p);
    return initial_ * std::pow(rate_, p);
  }
  std::string config() const override {
    return "ExponentialDecay(initial_learning_rate=" + num(initial_) +
           ", decay_steps=" + std::to_string(steps_) + ", decay_rate=" + num(rate_) +
           ", staircase=" + (staircase_ ? "True" : "False") + ")";
  }

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
  PiecewiseConstantDecay(std::vector<int64_t> boundaries, std::vector<double> values)
      : boundaries_(std::move(boundaries)), values_(std::move(values)) {
    if (values_.size() != boundaries_.size() + 1)
      throw Error(DLRT_INVALID_ARGUMENT,
                  "PiecewiseConstantDecay: " + std::to_string(boundaries_.size()) +
                      " boundaries need " + std::to_string(boundaries_.size() + 1) +
                      " values, got " + std::to_string(values_.size()));
    for (size_t i = 1; i < boundaries_.size(); ++i)
      if (boundaries_[i] <= boundaries_[i - 1])
        throw Error(DLRT_INVALID_ARGUMENT,
                    "PiecewiseConstantDecay: boundaries must increase, got " +
                        std::to_string(boundaries_[i - 1]) + " then " +
                        std::to_string(boundaries_[i]));
    for (double v : values_)
      if (!(v > 0))
        throw Error(DLRT_INVALID_ARGUMENT,
                    "PiecewiseConstantDecay: every value must be > 0, got " + num(v));
  }
  double operator()(int64_t step) const override {
    size_t i = 0;
    while (i < boundaries_.size() && step > boundaries_[i]) ++i;
    return values_[i];
  }
  std::string config() const override {
    std::string b, v;
    for (int64_t x : boundaries_) b += (b.empty() ? "" : ", ") + std::to_string(x);
    for (double x : values_) v += (v.empty() ? "" : ", ") + num(x);
    return "PiecewiseConstantDecay(boundaries=[" + b + "], values=[" + v + "])";
  }

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
              double warmup_target = 0.0, int64_t warmup_steps = 0)
      : initial_(initial_learning_rate),
        steps_(decay_steps),
        alpha_(alpha),
        target_(warmup_target),
        warmup_(warmup_steps) {
    if (!(initial_ > 0))
      throw Error(DLRT_INVALID_ARGUMENT, "CosineDecay: initial_learning_rate must be > 0");
    if (steps_ < 1) throw Error(DLRT_INVALID_ARGUMENT, "CosineDecay: decay_steps must be >= 1");
    if (!(alpha_ >= 0 && alpha_ <= 1))
      throw Error(DLRT_INVALID_ARGUMENT,
                  "CosineDecay: alpha must be in [0, 1], got " + num(alpha_));
    if (warmup_ < 0) throw Error(DLRT_INVALID_ARGUMENT, "CosineDecay: warmup_steps must be >= 0");
    if (warmup_ > 0 && !(target_ > 0))
      throw Error(DLRT_INVALID_ARGUMENT, "CosineDecay: warmup_steps > 0 needs warmup_target > 0");
  }
  double operator()(int64_t step) const override {
    if (warmup_ > 0 && step < warmup_)
      return initial_ +
             (target_ - initial_) * static_cast<double>(step) / static_cast<double>(warmup_);
    const double peak = warmup_ > 0 ? target_ : initial_;
    const double t = static_cast<double>(std::min(step - warmup_, steps_));
    const double pi = 3.14159265358979323846;
    const double cosine = 0.5 * (1.0 + std::cos(pi * t / static_cast<double>(steps_)));
    return peak * ((1.0 - alpha_) * cosine + alpha_);
  }
  std::string config() const override {
    std::string s = "CosineDecay(initial_learning_rate=" + num(initial_) +
                    ", decay_steps=" + std::to_string(steps_) + ", alpha=" + num(alpha_);
    if (warmup_ > 0)
      s += ", warmup_target=" + num(target_) + ", warmup_steps=" + std::to_string(warmup_);
    return s + ")";
  }

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
  LearningRate(double constant) : constant_(constant) {  // NOLINT(runtime/explicit)
    if (!(constant_ > 0))
      throw Error(DLRT_INVALID_ARGUMENT,
                  "learning_rate must be > 0, got " + std::to_string(constant_));
  }
  template <typename S,
            typename = std::enable_if_t<std::is_base_of_v<LearningRateSchedule, std::decay_t<S>>>>
  LearningRate(S&& schedule)  // NOLINT(runtime/explicit)
      : schedule_(std::make_shared<std::decay_t<S>>(std::forward<S>(schedule))) {}

  // The rate of the step after `step` steps done; a schedule's value must be finite and > 0.
  double at(int64_t step) const {
    if (!schedule_) return constant_;
    const double v = (*schedule_)(step);
    if (!(v > 0) || !std::isfinite(v))
      throw Error(DLRT_INVALID_ARGUMENT,
                  schedule_->config() + " gives learning rate " + std::to_string(v) + " at step " +
                      std::to_string(step) + "; expected a finite value > 0");
    return v;
  }
  bool is_schedule() const { return schedule_ != nullptr; }
  // "0.001" or the schedule's config.
  std::string config() const {
    if (schedule_) return schedule_->config();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", constant_);
    return buf;
  }

 private:
  double constant_ = 0;
  std::shared_ptr<const LearningRateSchedule> schedule_;  // shared by the optimizer's clones
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_SCHEDULES_HPP_
