// nn_format_test.cc: dlrt::nn's printed and written formats against Keras' — the summary
// table (expected text produced by Keras' own print_row algorithm, run in Python), the
// progress lines (terminal and not), the CSVLogger file — plus the seeded epoch order and
// the initializers' fans. No device work: the context loads no plugin.
#include <dlrt/nn.hpp>
#include <dlrt/nn/plan.hpp>  // model.plan()
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace nn = dlrt::nn;

namespace {

dlrt::Context no_plugins() {
  return dlrt::Context(dlrt::ContextOptions().search_default_paths(false));
}

nn::Sequential* reference_model(dlrt::Context& ctx) {
  return new nn::Sequential(
      ctx, {nn::Input({28, 28, 1}), nn::Conv2D(32, {3, 3}, "relu"), nn::MaxPool2D({2, 2}),
            nn::Conv2D(64, {3, 3}, "relu"), nn::MaxPool2D({2, 2}), nn::Conv2D(64, {3, 3}, "relu"),
            nn::Flatten(), nn::Dense(64, "relu"), nn::Dense(10)});
}

TEST(NnSummary, ReferenceModelIsKerasTable) {
  dlrt::Context ctx = no_plugins();
  std::unique_ptr<nn::Sequential> model(reference_model(ctx));
  std::ostringstream out;
  model->summary(out);
  EXPECT_EQ(out.str(),
            "Model: \"sequential\"\n"
            "_________________________________________________________________\n"
            "Layer (type)                 Output Shape              Param #   \n"
            "=================================================================\n"
            "conv2d (Conv2D)              (None, 26, 26, 32)        320       \n"
            "_________________________________________________________________\n"
            "max_pooling2d (MaxPooling2D) (None, 13, 13, 32)        0         \n"
            "_________________________________________________________________\n"
            "conv2d_1 (Conv2D)            (None, 11, 11, 64)        18496     \n"
            "_________________________________________________________________\n"
            "max_pooling2d_1 (MaxPooling2 (None, 5, 5, 64)          0         \n"
            "_________________________________________________________________\n"
            "conv2d_2 (Conv2D)            (None, 3, 3, 64)          36928     \n"
            "_________________________________________________________________\n"
            "flatten (Flatten)            (None, 576)               0         \n"
            "_________________________________________________________________\n"
            "dense (Dense)                (None, 64)                36928     \n"
            "_________________________________________________________________\n"
            "dense_1 (Dense)              (None, 10)                650       \n"
            "=================================================================\n"
            "Total params: 93,322\n"
            "Trainable params: 93,322\n"
            "Non-trainable params: 0\n"
            "_________________________________________________________________\n");
}

TEST(NnSummary, StateOfCompiledModel) {
  dlrt::Context ctx = no_plugins();
  std::unique_ptr<nn::Sequential> model(reference_model(ctx));
  model->compile(nn::Adam(), nn::SparseCategoricalCrossentropy(true), {"accuracy"});
  // 10 weights, two Adam slots each, the learning rate, the step count.
  const auto& state = model->plan().state;
  ASSERT_EQ(state.size(), 32u);
  EXPECT_EQ(state[0].name, "conv2d/kernel");
  EXPECT_EQ(state[0].dims, (nn::Shape{3, 3, 1, 32}));
  EXPECT_EQ(state[10].name, "conv2d/kernel/m");
  EXPECT_EQ(state[11].name, "conv2d/kernel/v");
  EXPECT_EQ(state[30].name, "optimizer/learning_rate");
  EXPECT_EQ(state[31].name, "optimizer/iterations");
  int64_t trainable = 0;
  for (const auto& s : state) trainable += s.trainable ? nn::element_count(s.dims) : 0;
  EXPECT_EQ(trainable, 93322);
}

TEST(NnSummary, ShapeErrorsNameTheLayer) {
  dlrt::Context ctx = no_plugins();
  nn::Sequential model(ctx, {nn::Input({4, 4, 1}), nn::Conv2D(8, {5, 5})});
  std::ostringstream out;
  try {
    model.summary(out);
    FAIL() << "a 5x5 kernel on 4x4 built";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("conv2d (Conv2D): input shape (None, 4, 4, 1)"), std::string::npos)
        << e.message();
  }
  // Dense acts on the last axis of any rank, as Keras' does: (None, 4, 4, 1) -> (None, 4, 4, 3).
  nn::Sequential dense_on_image(ctx, {nn::Input({4, 4, 1}), nn::Dense(3)});
  std::ostringstream dense_out;
  dense_on_image.summary(dense_out);
  EXPECT_NE(dense_out.str().find("(None, 4, 4, 3)"), std::string::npos) << dense_out.str();
  EXPECT_THROW(nn::Conv2D(8, {3, 3}, "gelu"), dlrt::Error);
  EXPECT_THROW(nn::Dropout(1.0), dlrt::Error);
}

TEST(NnProgress, StepAndEpochLinesAreKeras) {
  const nn::Logs logs = {{"loss", 0.6123}, {"accuracy", 0.777}};
  EXPECT_EQ(
      nn::progress::step_line(120, 938, 41.7, logs),
      "120/938 [==>...........................] - ETA: 41s - loss: 0.6123 - accuracy: 0.7770");
  EXPECT_EQ(nn::progress::step_line(1, 938, 75, logs).substr(0, 9), "  1/938 [");
  EXPECT_EQ(
      nn::progress::epoch_line(
          938, 12.2,
          {{"loss", 0.5012}, {"accuracy", 0.8181}, {"val_loss", 0.39}, {"val_accuracy", 0.8605}}),
      "938/938 [==============================] - 12s 13ms/step - loss: 0.5012 - "
      "accuracy: 0.8181 - val_loss: 0.3900 - val_accuracy: 0.8605");
  EXPECT_EQ(nn::progress::eta(75.9), "1:15");
  EXPECT_EQ(nn::progress::eta(3725), "1:02:05");
  EXPECT_EQ(nn::progress::values({{"loss", 0.0005}}), " - loss: 5.0000e-04");
  EXPECT_EQ(nn::progress::per_step(2.4), " 2s/step");
  EXPECT_EQ(nn::progress::per_step(0.0004), " 400us/step");
}

TEST(NnProgress, TerminalRedrawsInPlace) {
  std::ostringstream out;
  nn::ProgressOptions o;
  o.terminal = true;
  o.out = &out;
  nn::Progbar bar(10, o);
  bar.update(1, {{"loss", 1.0}});
  bar.finish({{"loss", 0.5}});
  const std::string s = out.str();
  EXPECT_EQ(s.rfind("\r 1/10 [==>....", 0), 0u) << s;
  EXPECT_EQ(s.find('\n'), s.size() - 1) << "one newline, at the end: " << s;
  EXPECT_NE(s.find("\r10/10 [==============================] - "), std::string::npos) << s;
}

TEST(NnProgress, PlainLinesWhenNotATerminal) {
  std::ostringstream out;
  nn::ProgressOptions o;
  o.terminal = false;
  o.lines_per_epoch = 5;
  o.out = &out;
  nn::Progbar bar(10, o);
  for (int s = 1; s <= 10; ++s) bar.update(s, {{"loss", 1.0 / s}});
  bar.finish({{"loss", 0.1}});
  const std::string s = out.str();
  EXPECT_EQ(s.find('\r'), std::string::npos);
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 5u) << s;  // steps 2, 4, 6, 8, then the epoch line
  EXPECT_EQ(lines[0].rfind(" 2/10 [=====>", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(" - ETA: "), std::string::npos);
  EXPECT_EQ(lines[4].rfind("10/10 [==============================] - ", 0), 0u) << lines[4];
  EXPECT_NE(lines[4].find("/step - loss: 0.1000"), std::string::npos) << lines[4];
}

TEST(NnProgress, EpochHeaderTakesTheRunsTotalWhenGiven) {
  std::ostringstream out;
  nn::ProgressOptions o;
  o.out = &out;
  nn::Progbar::epoch_header(o, 2, 3);
  o.epochs_total = 36;  // a loop calling fit once per epoch
  nn::Progbar::epoch_header(o, 2, 3);
  EXPECT_EQ(out.str(), "Epoch 3/3\nEpoch 3/36\n");
}

TEST(NnCsvLogger, KerasColumnsAndRows) {
  const std::string path = ::testing::TempDir() + "nn_csv_test.csv";
  dlrt::Context ctx = no_plugins();
  nn::Sequential model(ctx, {nn::Input({2}), nn::Dense(2)});
  {
    nn::CSVLogger csv(path);
    csv.on_train_begin(model);
    csv.on_epoch_end(model, 0,
                     {{"loss", 0.5},
                      {"accuracy", 0.8181166648864746},
                      {"val_loss", 1e-05},
                      {"val_accuracy", 1.0}});
    csv.on_epoch_end(
        model, 1, {{"loss", 0.25}, {"accuracy", 0.9}, {"val_loss", 0.1}, {"val_accuracy", 0.95}});
    csv.on_train_end(model);
  }
  auto slurp = [&] {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(slurp(),
            "epoch,accuracy,loss,val_accuracy,val_loss\r\n"
            "0,0.8181166648864746,0.5,1.0,1e-05\r\n"
            "1,0.9,0.25,0.95,0.1\r\n");
  // append (a resumed run): rows go on, no second header.
  nn::CSVLogger more(path, ',', /*append=*/true);
  more.on_train_begin(model);
  more.on_epoch_end(model, 2, {{"loss", 0.125}});
  more.on_train_end(model);
  const std::string all = slurp();
  EXPECT_EQ(all.substr(all.size() - 9), "2,0.125\r\n");
  EXPECT_EQ(all.find("epoch", 1), std::string::npos);
  std::remove(path.c_str());
}

TEST(NnData, EpochOrderIsAPureSeededPermutation) {
  const auto a = nn::epoch_order(7, 3, 1000, true);
  EXPECT_EQ(a, nn::epoch_order(7, 3, 1000, true));
  EXPECT_NE(a, nn::epoch_order(7, 4, 1000, true));
  EXPECT_NE(a, nn::epoch_order(8, 3, 1000, true));
  EXPECT_EQ(std::set<int32_t>(a.begin(), a.end()).size(), 1000u);
  EXPECT_EQ(nn::epoch_order(7, 3, 5, false), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  // Each variable its own seed; names, not order, decide it.
  EXPECT_NE(nn::derive_seed(1, "dense/kernel"), nn::derive_seed(1, "dense_1/kernel"));
  EXPECT_NE(nn::derive_seed(1, "dense/kernel"), nn::derive_seed(2, "dense/kernel"));
  EXPECT_LT(nn::derive_seed(1, "dense/kernel"), uint64_t{1} << 63);
}

TEST(NnInitializers, GlorotAndHeUseKerasFans) {
  const auto conv = nn::Initializer::fans({3, 3, 32, 64});
  EXPECT_EQ(conv.first, 288.0);
  EXPECT_EQ(conv.second, 576.0);
  auto [op, attrs] = nn::Initializer::glorot_uniform().init_op({576, 64}, 5);
  EXPECT_EQ(op, "random_uniform");
  const dlrt_attr maxval = attrs[1].c();
  EXPECT_STREQ(maxval.name, "maxval");
  EXPECT_DOUBLE_EQ(maxval.f, std::sqrt(6.0 / (576 + 64)));
  EXPECT_EQ(nn::Initializer::he_normal().init_op({10, 10}, 1).first, "random_normal");
  EXPECT_EQ(nn::Initializer::zeros().init_op({10}, 1).first, "fill");
}

}  // namespace
