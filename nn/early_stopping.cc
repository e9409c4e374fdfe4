// early_stopping.cc: EarlyStopping and LearningRateScheduler (dlrt/nn/early_stopping.hpp).
#include "dlrt/nn/early_stopping.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace dlrt::nn {

EarlyStopping::EarlyStopping(EarlyStoppingOptions options) : o_(std::move(options)) {
  if (o_.mode != "auto" && o_.mode != "min" && o_.mode != "max")
    throw Error(DLRT_INVALID_ARGUMENT,
                "EarlyStopping: mode '" + o_.mode + "' is not one of auto, min, max");
  if (o_.patience < 0)
    throw Error(DLRT_INVALID_ARGUMENT, "EarlyStopping: patience must be >= 0");
  maximize_ = o_.mode == "max" ||
              (o_.mode == "auto" && (o_.monitor.find("acc") != std::string::npos ||
                                     o_.monitor.find("auc") != std::string::npos));
}

bool EarlyStopping::improved(double value, double reference) const {
  const double delta = std::abs(o_.min_delta);
  return maximize_ ? value - delta > reference : value + delta < reference;
}

void EarlyStopping::on_train_begin(Model&) {
  wait_ = 0;
  stopped_epoch_ = 0;
  best_epoch_ = 0;
  best_ = maximize_ ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  best_weights_.clear();
}

void EarlyStopping::on_epoch_end(Model& model, int64_t epoch, const Logs& logs) {
  const double* value = nullptr;
  std::string keys;
  for (const auto& [k, v] : logs) {
    if (k == o_.monitor) value = &v;
    keys += (keys.empty() ? "" : ", ") + k;
  }
  if (value == nullptr)
    throw Error(DLRT_INVALID_ARGUMENT, "EarlyStopping: monitor '" + o_.monitor +
                                           "' is not in the logs; they have " + keys);
  // A NaN is no improvement (as Keras: the comparisons are false), so a diverged run stops.
  if (epoch < o_.start_from_epoch) return;
  if (o_.restore_best_weights && best_weights_.empty()) best_weights_ = model.state();
  ++wait_;
  if (improved(*value, best_)) {
    best_ = *value;
    best_epoch_ = epoch;
    if (o_.restore_best_weights) best_weights_ = model.state();
    // Keras: the baseline must be beaten too before patience starts over.
    if (!o_.baseline || improved(*value, *o_.baseline)) wait_ = 0;
    return;
  }
  if (wait_ >= o_.patience && epoch > 0) {
    stopped_epoch_ = epoch;
    model.stop_training = true;
    if (o_.restore_best_weights && !best_weights_.empty()) model.set_state(best_weights_);
  }
}

void LearningRateScheduler::on_epoch_begin(Model& model, int64_t epoch) {
  model.set_learning_rate(schedule_(epoch, model.learning_rate()));
}

}  // namespace dlrt::nn
