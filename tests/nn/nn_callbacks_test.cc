// nn_callbacks_test.cc: EarlyStopping, LearningRateScheduler, Model::stop_training and
// Model::set_learning_rate (dlrt/nn/early_stopping.hpp) on a small Dense model.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "nn_test_util.hpp"

namespace nn = dlrt::nn;

namespace {

struct Fixture {
  dlrt::Context ctx = nn_test::cpu_context();
  nn::Array x, y;
  nn::Sequential model{ctx, {nn::Input({4}), nn::Dense(8, "relu"), nn::Dense(2)}};
  explicit Fixture(double lr = 0.05) {
    nn_test::two_classes(64, 3, &x, &y);
    model.compile(nn::SGD(lr), nn::SparseCategoricalCrossentropy(true), {"accuracy"});
  }
};

TEST(NnCallbacks, EarlyStoppingStopsWhenTheMonitorStallsAndRestoresTheBestWeights) {
  // A rate of 1e-9 changes nothing: no epoch improves by min_delta, so with patience 2 fit
  // stops after epoch 2 (0-based), the third; restore_best_weights gives back epoch 0's.
  Fixture f(1e-9);
  nn::EarlyStoppingOptions o;
  o.monitor = "loss";
  o.min_delta = 1.0;
  o.patience = 2;
  o.restore_best_weights = true;
  auto stop = std::make_shared<nn::EarlyStopping>(o);
  nn::FitOptions fit = nn_test::quiet(20, 16);
  fit.callbacks.push_back(stop);
  const nn::History h = f.model.fit(f.x, f.y, fit);
  EXPECT_EQ(h.epoch.size(), 3u);
  EXPECT_EQ(stop->stopped_epoch(), 2);
  EXPECT_EQ(stop->best_epoch(), 0);
  EXPECT_TRUE(f.model.stop_training);
  // The next fit starts afresh (stop_training cleared) and runs its epochs.
  const nn::History again = f.model.fit(f.x, f.y, nn_test::quiet(2, 16));
  EXPECT_EQ(again.epoch.size(), 2u);
}

TEST(NnCallbacks, EarlyStoppingKeepsGoingWhileTheModelImproves) {
  Fixture f(0.05);
  nn::EarlyStoppingOptions o;
  o.monitor = "accuracy";  // "auto" mode: maximised
  o.patience = 10;
  auto stop = std::make_shared<nn::EarlyStopping>(o);
  nn::FitOptions fit = nn_test::quiet(4, 16);
  fit.callbacks.push_back(stop);
  EXPECT_EQ(f.model.fit(f.x, f.y, fit).epoch.size(), 4u);
  EXPECT_EQ(stop->stopped_epoch(), 0);
}

TEST(NnCallbacks, EarlyStoppingRefusesAMonitorTheLogsDoNotHave) {
  Fixture f;
  nn::EarlyStoppingOptions o;
  o.monitor = "val_loss";  // no validation data
  nn::FitOptions fit = nn_test::quiet(2, 16);
  fit.callbacks.push_back(std::make_shared<nn::EarlyStopping>(o));
  try {
    f.model.fit(f.x, f.y, fit);
    FAIL() << "expected an error";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("val_loss"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("loss, accuracy"), std::string::npos) << e.message();
  }
  o.mode = "sideways";
  EXPECT_THROW(nn::EarlyStopping bad(o), dlrt::Error);
}

TEST(NnCallbacks, LearningRateSchedulerSetsEachEpochsRate) {
  Fixture f(0.1);
  std::vector<double> seen;
  auto sched = std::make_shared<nn::LearningRateScheduler>([&](int64_t epoch, double lr) {
    seen.push_back(lr);
    return 0.1 * std::pow(0.5, static_cast<double>(epoch + 1));
  });
  nn::FitOptions fit = nn_test::quiet(3, 16);
  fit.callbacks.push_back(sched);
  f.model.fit(f.x, f.y, fit);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_DOUBLE_EQ(seen[0], 0.1);    // the optimizer's own rate
  EXPECT_DOUBLE_EQ(seen[1], 0.05);   // what epoch 0 set
  EXPECT_DOUBLE_EQ(seen[2], 0.025);
  EXPECT_DOUBLE_EQ(f.model.learning_rate(), 0.0125);
  f.model.clear_learning_rate();
  EXPECT_DOUBLE_EQ(f.model.learning_rate(), 0.1);
  EXPECT_THROW(f.model.set_learning_rate(-1.0), dlrt::Error);
  EXPECT_THROW(f.model.set_learning_rate(NAN), dlrt::Error);
}

TEST(NnCallbacks, AnOverriddenRateTrainsAsTheOptimizersOwnWould) {
  // SGD(0.05) and SGD(0.2) with the rate set to 0.05 take the same steps.
  Fixture a(0.05), b(0.2);
  b.model.set_learning_rate(0.05);
  const nn::History ha = a.model.fit(a.x, a.y, nn_test::quiet(2, 16));
  const nn::History hb = b.model.fit(b.x, b.y, nn_test::quiet(2, 16));
  EXPECT_EQ(ha.history.at("loss"), hb.history.at("loss"));
}

}  // namespace
