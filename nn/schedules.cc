// schedules.cc: the learning-rate schedules and LearningRate (dlrt/nn/schedules.hpp).
#include "dlrt/nn/schedules.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dlrt::nn {

LearningRateSchedule::~LearningRateSchedule() = default;

std::string LearningRateSchedule::num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

ExponentialDecay::ExponentialDecay(double initial_learning_rate, int64_t decay_steps,
                                   double decay_rate, bool staircase)
    : initial_(initial_learning_rate),
      steps_(decay_steps),
      rate_(decay_rate),
      staircase_(staircase) {
  if (!(initial_ > 0))
    throw Error(DLRT_INVALID_ARGUMENT, "ExponentialDecay: initial_learning_rate must be > 0");
  if (steps_ < 1) throw Error(DLRT_INVALID_ARGUMENT, "ExponentialDecay: decay_steps must be >= 1");
  if (!(rate_ > 0)) throw Error(DLRT_INVALID_ARGUMENT, "ExponentialDecay: decay_rate must be > 0");
}

double ExponentialDecay::operator()(int64_t step) const {
  double p = static_cast<double>(step) / static_cast<double>(steps_);
  if (staircase_) p = std::floor(p);
  return initial_ * std::pow(rate_, p);
}

std::string ExponentialDecay::config() const {
  return "ExponentialDecay(initial_learning_rate=" + num(initial_) +
         ", decay_steps=" + std::to_string(steps_) + ", decay_rate=" + num(rate_) +
         ", staircase=" + (staircase_ ? "True" : "False") + ")";
}

PiecewiseConstantDecay::PiecewiseConstantDecay(std::vector<int64_t> boundaries,
                                               std::vector<double> values)
    : boundaries_(std::move(boundaries)), values_(std::move(values)) {
  if (values_.size() != boundaries_.size() + 1)
    throw Error(DLRT_INVALID_ARGUMENT,
                "PiecewiseConstantDecay: " + std::to_string(boundaries_.size()) +
                    " boundaries need " + std::to_string(boundaries_.size() + 1) + " values, got " +
                    std::to_string(values_.size()));
  for (size_t i = 1; i < boundaries_.size(); ++i)
    if (boundaries_[i] <= boundaries_[i - 1])
      throw Error(DLRT_INVALID_ARGUMENT, "PiecewiseConstantDecay: boundaries must increase, got " +
                                             std::to_string(boundaries_[i - 1]) + " then " +
                                             std::to_string(boundaries_[i]));
  for (double v : values_)
    if (!(v > 0))
      throw Error(DLRT_INVALID_ARGUMENT,
                  "PiecewiseConstantDecay: every value must be > 0, got " + num(v));
}

double PiecewiseConstantDecay::operator()(int64_t step) const {
  size_t i = 0;
  while (i < boundaries_.size() && step > boundaries_[i]) ++i;
  return values_[i];
}

std::string PiecewiseConstantDecay::config() const {
  std::string b, v;
  for (int64_t x : boundaries_) b += (b.empty() ? "" : ", ") + std::to_string(x);
  for (double x : values_) v += (v.empty() ? "" : ", ") + num(x);
  return "PiecewiseConstantDecay(boundaries=[" + b + "], values=[" + v + "])";
}

CosineDecay::CosineDecay(double initial_learning_rate, int64_t decay_steps, double alpha,
                         double warmup_target, int64_t warmup_steps)
    : initial_(initial_learning_rate),
      steps_(decay_steps),
      alpha_(alpha),
      target_(warmup_target),
      warmup_(warmup_steps) {
  if (!(initial_ > 0))
    throw Error(DLRT_INVALID_ARGUMENT, "CosineDecay: initial_learning_rate must be > 0");
  if (steps_ < 1) throw Error(DLRT_INVALID_ARGUMENT, "CosineDecay: decay_steps must be >= 1");
  if (!(alpha_ >= 0 && alpha_ <= 1))
    throw Error(DLRT_INVALID_ARGUMENT, "CosineDecay: alpha must be in [0, 1], got " + num(alpha_));
  if (warmup_ < 0) throw Error(DLRT_INVALID_ARGUMENT, "CosineDecay: warmup_steps must be >= 0");
  if (warmup_ > 0 && !(target_ > 0))
    throw Error(DLRT_INVALID_ARGUMENT, "CosineDecay: warmup_steps > 0 needs warmup_target > 0");
}

double CosineDecay::operator()(int64_t step) const {
  if (warmup_ > 0 && step < warmup_)
    return initial_ +
           (target_ - initial_) * static_cast<double>(step) / static_cast<double>(warmup_);
  const double peak = warmup_ > 0 ? target_ : initial_;
  const double t = static_cast<double>(std::min(step - warmup_, steps_));
  const double pi = 3.14159265358979323846;
  const double cosine = 0.5 * (1.0 + std::cos(pi * t / static_cast<double>(steps_)));
  return peak * ((1.0 - alpha_) * cosine + alpha_);
}

std::string CosineDecay::config() const {
  std::string s = "CosineDecay(initial_learning_rate=" + num(initial_) +
                  ", decay_steps=" + std::to_string(steps_) + ", alpha=" + num(alpha_);
  if (warmup_ > 0)
    s += ", warmup_target=" + num(target_) + ", warmup_steps=" + std::to_string(warmup_);
  return s + ")";
}

LearningRate::LearningRate(double constant) : constant_(constant) {
  if (!(constant_ > 0))
    throw Error(DLRT_INVALID_ARGUMENT,
                "learning_rate must be > 0, got " + std::to_string(constant_));
}

double LearningRate::at(int64_t step) const {
  if (!schedule_) return constant_;
  const double v = (*schedule_)(step);
  if (!(v > 0) || !std::isfinite(v))
    throw Error(DLRT_INVALID_ARGUMENT, schedule_->config() + " gives learning rate " +
                                           std::to_string(v) + " at step " + std::to_string(step) +
                                           "; expected a finite value > 0");
  return v;
}

std::string LearningRate::config() const {
  if (schedule_) return schedule_->config();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", constant_);
  return buf;
}

}  // namespace dlrt::nn
