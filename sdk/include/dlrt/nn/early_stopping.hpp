// dlrt/nn/early_stopping.hpp: Keras' EarlyStopping and LearningRateScheduler callbacks.
//
//   auto stop = std::make_shared<nn::EarlyStopping>(nn::EarlyStoppingOptions{
//       .monitor = "val_loss", .patience = 2, .restore_best_weights = true});
//   model.fit(x, y, {.epochs = 50, .validation_x = &vx, .validation_y = &vy,
//                    .callbacks = {stop}});
//   stop->stopped_epoch();   // 0 when it never stopped, as Keras'
#ifndef DLRT_NN_EARLY_STOPPING_HPP_
#define DLRT_NN_EARLY_STOPPING_HPP_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dlrt/nn/callbacks.hpp"
#include "dlrt/nn/model.hpp"

namespace dlrt::nn {

struct EarlyStoppingOptions {
  std::string monitor = "val_loss";
  double min_delta = 0.0;  // a change smaller than this is no improvement
  int64_t patience = 0;    // epochs without improvement before stopping
  // "min" (losses), "max" (accuracies), "auto": max for names containing "acc", else min.
  std::string mode = "auto";
  // When set, the monitored value must also beat this to count as an improvement.
  std::optional<double> baseline;
  // At the stop (or at the end of training), give the model the weights of the best epoch.
  bool restore_best_weights = false;
  int64_t start_from_epoch = 0;  // epochs before this are not watched (warm-up)
};

// Stops fit (Model::stop_training) when `monitor` has not improved for `patience` epochs.
// A monitor the logs do not have is INVALID_ARGUMENT naming the keys there are (Keras only
// warns; a typo that silently never stops is worse).
class EarlyStopping : public Callback {
 public:
  explicit EarlyStopping(EarlyStoppingOptions options = {});
  void on_train_begin(Model& model) override;
  void on_epoch_end(Model& model, int64_t epoch, const Logs& logs) override;
  int64_t stopped_epoch() const { return stopped_epoch_; }
  int64_t best_epoch() const { return best_epoch_; }
  double best() const { return best_; }

 private:
  bool improved(double value, double reference) const;
  EarlyStoppingOptions o_;
  bool maximize_ = false;
  double best_ = 0.0;
  int64_t wait_ = 0, stopped_epoch_ = 0, best_epoch_ = 0;
  std::vector<Model::NamedValue> best_weights_;
};

// Keras' LearningRateScheduler: before each epoch, schedule(epoch, current rate) gives the
// rate for that epoch's steps (Model::set_learning_rate).
class LearningRateScheduler : public Callback {
 public:
  using Schedule = std::function<double(int64_t epoch, double learning_rate)>;
  explicit LearningRateScheduler(Schedule schedule) : schedule_(std::move(schedule)) {}
  void on_epoch_begin(Model& model, int64_t epoch) override;

 private:
  Schedule schedule_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_EARLY_STOPPING_HPP_
