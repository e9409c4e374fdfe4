// nn_functional_test.cc: Keras' functional API in dlrt::nn — a Sequential and the same
// network written functionally train bit for bit the same; a residual CNN (two convolutions
// and an Add shortcut) learns Fashion-MNIST on the cpu plugin; a layer called twice shares
// its weights; summary() prints Keras' functional table; bad graphs (a cycle, a disconnected
// output, a tensor of another model's inputs, mismatched Add/Concatenate shapes) are
// INVALID_ARGUMENT naming the layer and shapes; functional checkpoints round-trip; the new
// layers (Activation by name, LeakyReLU, Concatenate), initializers and the L2 regularizer.
#include <dlrt/nn.hpp>
#include <dlrt/nn/plan.hpp>  // model.plan()
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace nn = dlrt::nn;

namespace {

using nn_test::cpu_context;

dlrt::Context no_plugins() {
  return dlrt::Context(dlrt::ContextOptions().search_default_paths(false));
}

using nn_test::quiet;

nn::CompileConfig seeded(uint64_t seed) {
  nn::CompileConfig c;
  c.seed = seed;
  return c;
}

// Three classes, the nearest of three fixed centres, with noise: x (n,4) f32, y (n) i32.
void blobs(int n, unsigned seed, nn::Array* x, nn::Array* y) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> noise(0.f, 0.3f);
  const float centres[3][4] = {{1, 0, 0, 1}, {0, 1, 1, 0}, {-1, -1, 0, 0}};
  std::vector<float> xs;
  std::vector<int32_t> ys;
  for (int i = 0; i < n; ++i) {
    ys.push_back(i % 3);
    for (int k = 0; k < 4; ++k) xs.push_back(centres[i % 3][k] + noise(gen));
  }
  *x = nn::Array::of<float>({n, 4}, xs);
  *y = nn::Array::of<int32_t>({n}, ys);
}

// u8 images (n,8,8,1) whose class (n) is which third of the image is bright.
void striped_images(int n, unsigned seed, nn::Array* x, nn::Array* y) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dim(0, 60);
  std::vector<uint8_t> px;
  std::vector<int32_t> ys;
  for (int i = 0; i < n; ++i) {
    const int c = i % 3;
    ys.push_back(c);
    for (int h = 0; h < 8; ++h)
      for (int w = 0; w < 8; ++w)
        px.push_back(static_cast<uint8_t>(w / 3 == c ? 200 + dim(gen) / 2 : dim(gen)));
  }
  *x = nn::Array::of<uint8_t>({n, 8, 8, 1}, px);
  *y = nn::Array::of<int32_t>({n}, ys);
}

// Fashion-MNIST's first `rows` images (rows,28,28,1) u8 and labels (rows) u8.
nn::Array fashion(const std::string& file, bool images, int64_t rows) {
  dlrt::IdxArray a =
      dlrt::read_idx("/usr/share/datasets/fashion-mnist/" + file, static_cast<uint64_t>(rows));
  std::vector<int64_t> dims = a.dims();
  if (images) dims.push_back(1);
  const auto* p = static_cast<const uint8_t*>(a.data());
  return nn::Array(DLRT_U8, dims, std::vector<uint8_t>(p, p + a.bytes()));
}

void expect_same_state(nn::Model& a, nn::Model& b) {
  auto sa = a.state(), sb = b.state();
  ASSERT_EQ(sa.size(), sb.size());
  for (size_t i = 0; i < sa.size(); ++i) {
    EXPECT_EQ(sa[i].name, sb[i].name);
    EXPECT_EQ(sa[i].dims, sb[i].dims) << sa[i].name;
    EXPECT_EQ(sa[i].values, sb[i].values) << sa[i].name << " differs";
  }
}

std::vector<float> floats(const nn::Array& a) {
  std::vector<float> v(static_cast<size_t>(a.bytes().size() / sizeof(float)));
  std::memcpy(v.data(), a.data(), v.size() * sizeof(float));
  return v;
}

const std::vector<float>& value_of(const std::vector<nn::Model::NamedValue>& state,
                                   const std::string& name) {
  for (const auto& v : state)
    if (v.name == name) return v.values;
  throw dlrt::Error(DLRT_NOT_FOUND, "no state variable " + name);
}

bool has_op(const std::string& name) {
  for (const dlrt::OpInfo& op : dlrt::op_list())
    if (op.name == name) return true;
  return false;
}

// Runs `f`, which must throw dlrt::Error with `code`; returns its message.
template <typename F>
std::string error_of(F f, dlrt_code code = DLRT_INVALID_ARGUMENT) {
  try {
    f();
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no dlrt::Error thrown";
  return "";
}

// ---- functional == Sequential ----

TEST(NnFunctional, SameNetworkAsSequentialTrainsBitForBit) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y;
  striped_images(90, 5, &x, &y);  // 90 = 2 batches of 32 + one padded batch of 26
  nn::Sequential seq(ctx, {nn::Input({8, 8, 1}), nn::Conv2D(4, {3, 3}, "relu"), nn::MaxPool2D(),
                           nn::Flatten(), nn::Dropout(0.25), nn::Dense(3)});
  auto in = nn::Input({8, 8, 1});
  nn::SymbolicTensor t = nn::Conv2D(4, {3, 3}, "relu")(in);
  t = nn::MaxPool2D()(t);
  t = nn::Flatten()(t);
  t = nn::Dropout(0.25)(t);
  nn::Model fun(ctx, in, nn::Dense(3)(t));
  for (nn::Model* m : {static_cast<nn::Model*>(&seq), &fun})
    m->compile(nn::Adam(0.01), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, seeded(11));

  // The same plan: layers, nodes and state variables.
  ASSERT_EQ(seq.layers().size(), fun.layers().size());
  for (size_t l = 0; l < seq.layers().size(); ++l)
    EXPECT_EQ(seq.layers()[l]->name(), fun.layers()[l]->name());
  expect_same_state(seq, fun);  // the same first weights

  const nn::History hs = seq.fit(x, y, quiet(3, 32));
  const nn::History hf = fun.fit(x, y, quiet(3, 32));
  EXPECT_EQ(hs.history.at("loss"), hf.history.at("loss"));
  expect_same_state(seq, fun);
  EXPECT_EQ(floats(seq.predict(x, 32)), floats(fun.predict(x, 32)));
  EXPECT_EQ(seq.evaluate(x, y, 32), fun.evaluate(x, y, 32));
}

// ---- a residual network on real data ----

// in -> conv(8, 3x3, relu) -> conv(8, 3x3, same, relu) -> Add with the first conv's output
//    -> MaxPool 2x2 -> Flatten -> Dense(10)
nn::SymbolicTensor residual_network(const nn::Input& in) {
  nn::SymbolicTensor x = nn::Conv2D(8, {3, 3}, "relu")(in);
  nn::SymbolicTensor shortcut = x;
  nn::Conv2DOptions same;
  same.padding = "same";
  same.activation = "relu";
  x = nn::Conv2D(8, {3, 3}, same)(x);
  nn::SymbolicTensor y = nn::Add()({x, shortcut});
  return nn::Dense(10)(nn::Flatten()(nn::MaxPool2D()(y)));
}

TEST(NnFunctional, ResidualCnnLearnsFashionMnist) {
  dlrt::Context ctx = cpu_context();
  const nn::Array x = fashion("train-images-idx3-ubyte.gz", true, 600);
  const nn::Array y = fashion("train-labels-idx1-ubyte.gz", false, 600);
  const nn::Array tx = fashion("t10k-images-idx3-ubyte.gz", true, 300);
  const nn::Array ty = fashion("t10k-labels-idx1-ubyte.gz", false, 300);
  auto in = nn::Input({28, 28, 1});
  nn::Model m(ctx, in, residual_network(in), "residual");
  m.compile(nn::Adam(2e-3), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, seeded(1));
  const nn::Logs before = m.evaluate(tx, ty, 100);
  const nn::History h = m.fit(x, y, quiet(4, 32));
  const nn::Logs after = m.evaluate(tx, ty, 100);
  // Ten classes: chance is 0.1. A few hundred images and epochs give well above it.
  EXPECT_GT(after[1].second, 0.5) << "test accuracy after 4 epochs on 600 images";
  EXPECT_LT(after[0].second, before[0].second);
  EXPECT_LT(h.history.at("loss").back(), h.history.at("loss").front());
}

// ---- shared layers ----

TEST(NnFunctional, SharedLayerSharesItsWeights) {
  dlrt::Context ctx = cpu_context();
  auto in = nn::Input({4});
  nn::Dense shared(4, "tanh");
  nn::SymbolicTensor h = shared(shared(in));  // twice: one kernel, one bias
  nn::Model m(ctx, in, nn::Dense(3)(h));
  m.compile(nn::Adam(0.02), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, seeded(4));
  ASSERT_EQ(m.layers().size(), 2u);  // dense (shared) and dense_1
  std::vector<std::string> names;
  for (const auto& v : m.state()) names.push_back(v.name);
  EXPECT_EQ(names, (std::vector<std::string>{"dense/kernel", "dense/bias", "dense_1/kernel",
                                             "dense_1/bias", "dense/kernel/m", "dense/kernel/v",
                                             "dense/bias/m", "dense/bias/v", "dense_1/kernel/m",
                                             "dense_1/kernel/v", "dense_1/bias/m", "dense_1/bias/v",
                                             "optimizer/learning_rate", "optimizer/iterations"}));
  nn::Array x, y;
  blobs(120, 2, &x, &y);
  m.fit(x, y, quiet(3, 32));
  EXPECT_GT(m.evaluate(x, y)[1].second, 0.9);

  // The outputs are those of the one shared kernel applied twice.
  const auto st = m.state();
  const std::vector<float>& k = value_of(st, "dense/kernel");  // (4,4)
  const std::vector<float>& b = value_of(st, "dense/bias");
  const std::vector<float>& k1 = value_of(st, "dense_1/kernel");  // (4,3)
  const std::vector<float>& b1 = value_of(st, "dense_1/bias");
  const std::vector<float> xs = floats(x), out = floats(m.predict(x));
  for (size_t r = 0; r < 5; ++r) {
    std::vector<double> a(xs.begin() + 4 * r, xs.begin() + 4 * r + 4);
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<double> next(4);
      for (int j = 0; j < 4; ++j) {
        double s = b[j];
        for (int i = 0; i < 4; ++i) s += a[i] * k[4 * i + j];
        next[j] = std::tanh(s);
      }
      a = next;
    }
    for (int j = 0; j < 3; ++j) {
      double s = b1[j];
      for (int i = 0; i < 4; ++i) s += a[i] * k1[3 * i + j];
      EXPECT_NEAR(out[3 * r + j], s, 1e-4) << "row " << r << " class " << j;
    }
  }
}

TEST(NnFunctional, SharedLayerOnAnotherShapeIsRefused) {
  dlrt::Context ctx = no_plugins();
  auto in = nn::Input({4});
  nn::Dense shared(4);
  nn::Dense widen(6);
  nn::SymbolicTensor a = shared(in);        // kernel (4,4)
  nn::SymbolicTensor b = shared(widen(a));  // would need (6,4)
  nn::Model m(ctx, in, b);
  const std::string msg = error_of([&] { m.compile(nn::SGD(0.1), nn::MeanSquaredError()); });
  EXPECT_NE(msg.find("shared layer dense"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(None, 6)"), std::string::npos) << msg;
}

// ---- summary ----

TEST(NnFunctional, SummaryIsKerasFunctionalTable) {
  dlrt::Context ctx = no_plugins();
  auto in = nn::Input({28, 28, 1});
  nn::Model m(ctx, in, residual_network(in));
  std::ostringstream out;
  m.summary(out);
  // Every row is 98 columns: fields start at 0, 32, 53 and 65 (Keras' positions .33, .55,
  // .67 of 98).
  auto row = [](const std::string& text) {
    return text + std::string(98 - text.size(), ' ') + "\n";
  };
  const std::string rule = std::string(98, '_') + "\n", thick = std::string(98, '=') + "\n";
  EXPECT_EQ(
      out.str(),
      "Model: \"functional\"\n" + rule +
          row("Layer (type)                    Output Shape         Param #     Connected to") +
          thick + row("input (InputLayer)              (None, 28, 28, 1)    0           []") +
          rule +
          row("conv2d (Conv2D)                 (None, 26, 26, 8)    80          input[0][0]") +
          rule +
          row("conv2d_1 (Conv2D)               (None, 26, 26, 8)    584         conv2d[0][0]") +
          rule +
          row("add (Add)                       (None, 26, 26, 8)    0           conv2d_1[0][0]") +
          row("                                                                 conv2d[0][0]") +
          rule + row("max_pooling2d (MaxPooling2D)    (None, 13, 13, 8)    0           add[0][0]") +
          rule +
          row("flatten (Flatten)               (None, 1352)         0           "
              "max_pooling2d[0][0]") +
          rule +
          row("dense (Dense)                   (None, 10)           13530       flatten[0][0]") +
          thick + "Total params: 14,194\n" + "Trainable params: 14,194\n" +
          "Non-trainable params: 0\n" + rule);
}

TEST(NnFunctional, SummaryListsEveryCallOfASharedLayer) {
  dlrt::Context ctx = no_plugins();
  auto in = nn::Input({4});
  nn::Dense shared(4);
  nn::Model m(ctx, in, shared(shared(in)));
  std::ostringstream out;
  m.summary(out);
  const std::string s = out.str();
  EXPECT_NE(s.find("dense (Dense)                   (None, 4)            20          input[0][0]"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("\n" + std::string(65, ' ') + "dense[0][0]"), std::string::npos) << s;
  EXPECT_NE(s.find("Total params: 20\n"), std::string::npos) << s;
}

// ---- bad graphs ----

TEST(NnFunctional, CycleIsRefused) {
  dlrt::Context ctx = no_plugins();
  auto in = nn::Input({4});
  nn::SymbolicTensor a = nn::Dense(4)(in);
  nn::SymbolicTensor b = nn::Dense(4)(a);
  // Layer calls cannot make a cycle; editing a node by hand can: a now reads b.
  a.node()->inputs[0] = b;
  const std::string msg = error_of([&] { nn::Model m(ctx, in, b); });
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  EXPECT_NE(msg.find("layer dense (Dense)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(None, 4)"), std::string::npos) << msg;
  a.node()->inputs[0] = in;  // break the shared_ptr cycle again, so nothing leaks
}

TEST(NnFunctional, DisconnectedOutputIsRefused) {
  dlrt::Context ctx = no_plugins();
  auto in = nn::Input({4});
  auto other = nn::Input({5});
  nn::SymbolicTensor out = nn::Dense(2)(other);
  const std::string msg = error_of([&] { nn::Model m(ctx, in, out); });
  EXPECT_NE(msg.find("not reachable"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Input (None, 5)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("output 0 ((None, 2))"), std::string::npos) << msg;
  // An Input as the output of a model whose inputs it is not among.
  error_of([&] { nn::Model m(ctx, in, other); });
}

TEST(NnFunctional, TensorOfAnotherModelsInputsIsRefused) {
  dlrt::Context ctx = no_plugins();
  auto in_a = nn::Input({4});
  nn::SymbolicTensor feat_a = nn::Dense(4)(in_a);
  nn::Model a(ctx, in_a, feat_a);  // fine
  auto in_b = nn::Input({4});
  nn::SymbolicTensor mixed = nn::Add()({nn::Dense(4)(in_b), feat_a});
  const std::string msg = error_of([&] { nn::Model b(ctx, in_b, mixed); });
  EXPECT_NE(msg.find("another model's inputs"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Input (None, 4)"), std::string::npos) << msg;
  // A layer's output is not a model input.
  const std::string not_input = error_of([&] { nn::Model c(ctx, feat_a, mixed); });
  EXPECT_NE(not_input.find("expected an nn::Input"), std::string::npos) << not_input;
}

TEST(NnFunctional, AddOfMismatchedShapesIsRefused) {
  auto in = nn::Input({6, 6, 3});
  nn::SymbolicTensor a = nn::Conv2D(4, {3, 3})(in);  // (None, 4, 4, 4)
  nn::SymbolicTensor b = nn::Conv2D(4, {1, 1})(in);  // (None, 6, 6, 4)
  const std::string msg = error_of([&] { nn::Add()({a, b}); });
  EXPECT_NE(msg.find("add (Add)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(None, 4, 4, 4) and (None, 6, 6, 4)"), std::string::npos) << msg;
  const std::string one = error_of([&] { nn::Add()(a); });
  EXPECT_NE(one.find("at least 2"), std::string::npos) << one;
}

TEST(NnFunctional, ConcatenateChecksShapesAndAxis) {
  auto in = nn::Input({6, 6, 3});
  nn::SymbolicTensor a = nn::Conv2D(4, {3, 3})(in);  // (None, 4, 4, 4)
  nn::SymbolicTensor b = nn::Conv2D(5, {3, 3})(in);  // (None, 4, 4, 5)
  EXPECT_EQ(nn::Concatenate()({a, b}).shape(), (nn::Shape{4, 4, 9}));
  EXPECT_EQ(nn::Concatenate(3)({a, b}).shape(), (nn::Shape{4, 4, 9}));
  EXPECT_EQ(nn::Concatenate(1)({a, a, a}).shape(), (nn::Shape{12, 4, 4}));
  EXPECT_EQ(nn::Concatenate(-3)({a, a}).shape(), (nn::Shape{8, 4, 4}));
  const std::string msg = error_of([&] { nn::Concatenate(1)({a, b}); });
  EXPECT_NE(msg.find("concatenate (Concatenate)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(None, 4, 4, 4) and (None, 4, 4, 5)"), std::string::npos) << msg;
  const std::string batch = error_of([&] { nn::Concatenate(0)({a, b}); });
  EXPECT_NE(batch.find("axis 0 is the batch"), std::string::npos) << batch;
  error_of([&] { nn::Concatenate(4)({a, b}); });
  error_of([&] { nn::Concatenate(-4)({a, b}); });
  nn::SymbolicTensor flat = nn::Flatten()(a);
  error_of([&] { nn::Concatenate()({a, flat}); });  // ranks differ
}

// Needs the op `concat` (branch ops-shape): skipped until the op registry has it.
TEST(NnFunctional, ConcatenateTrains) {
  if (!has_op("concat")) GTEST_SKIP() << "the op registry has no 'concat' yet";
  dlrt::Context ctx = cpu_context();
  auto in = nn::Input({4});
  nn::SymbolicTensor a = nn::Dense(5, "relu")(in);
  nn::SymbolicTensor b = nn::Dense(3, "tanh")(in);
  nn::SymbolicTensor c = nn::Concatenate()({a, b});
  ASSERT_EQ(c.shape(), (nn::Shape{8}));
  nn::Model m(ctx, in, nn::Dense(3)(c));
  m.compile(nn::Adam(0.02), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, seeded(9));
  nn::Array x, y;
  blobs(120, 3, &x, &y);
  m.fit(x, y, quiet(4, 32));
  EXPECT_GT(m.evaluate(x, y)[1].second, 0.9);
  // The concatenated features are a's then b's: the output equals the two halves of the
  // last kernel applied to each branch.
  const auto st = m.state();
  const std::vector<float>& ka = value_of(st, "dense/kernel");  // (4,5)
  const std::vector<float>& ba = value_of(st, "dense/bias");
  const std::vector<float>& kb = value_of(st, "dense_1/kernel");  // (4,3)
  const std::vector<float>& bb = value_of(st, "dense_1/bias");
  const std::vector<float>& k = value_of(st, "dense_2/kernel");  // (8,3)
  const std::vector<float>& bias = value_of(st, "dense_2/bias");
  const std::vector<float> xs = floats(x), out = floats(m.predict(x));
  for (size_t r = 0; r < 3; ++r) {
    std::vector<double> f;
    for (int j = 0; j < 5; ++j) {
      double s = ba[j];
      for (int i = 0; i < 4; ++i) s += xs[4 * r + i] * ka[5 * i + j];
      f.push_back(std::max(0.0, s));
    }
    for (int j = 0; j < 3; ++j) {
      double s = bb[j];
      for (int i = 0; i < 4; ++i) s += xs[4 * r + i] * kb[3 * i + j];
      f.push_back(std::tanh(s));
    }
    for (int j = 0; j < 3; ++j) {
      double s = bias[j];
      for (int i = 0; i < 8; ++i) s += f[i] * k[3 * i + j];
      EXPECT_NEAR(out[3 * r + j], s, 1e-4);
    }
  }
}

// ---- several inputs and outputs ----

TEST(NnFunctional, MultiInputModelBuildsAndFits) {
  dlrt::Context ctx = cpu_context();
  auto a = nn::Input({4});
  auto b = nn::Input({4});
  nn::SymbolicTensor s = nn::Add()({nn::Dense(4)(a), nn::Dense(4)(b)});
  nn::Model m(ctx, {a, b}, {nn::Dense(3)(s), s});
  EXPECT_EQ(m.num_inputs(), 2u);
  EXPECT_EQ(m.num_outputs(), 2u);
  std::ostringstream out;
  m.summary(out);
  EXPECT_NE(out.str().find("input_1 (InputLayer)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("dense_1[0][0]"), std::string::npos) << out.str();
  m.compile(nn::SGD(0.1), nn::SparseCategoricalCrossentropy(true), {}, seeded(2));
  // 3 kernels, 3 biases, their 6 velocities, the learning rate, iterations
  EXPECT_EQ(m.state().size(), 14u);
  nn::Array x, y;
  blobs(10, 1, &x, &y);
  // One array per input and per output (nn_multi_io_test.cc has the rest); the single-array
  // form names what the model takes.
  const std::string msg = error_of([&] { m.fit(x, y, quiet(1, 5)); });
  EXPECT_NE(msg.find("2 inputs (input, input_1)"), std::string::npos) << msg;
  nn::History h = m.fit({x, x}, {y, y}, quiet(1, 5));
  EXPECT_EQ(h.history.count("dense_2_loss"), 1u);
  EXPECT_EQ(h.history.count("add_loss"), 1u);
  EXPECT_NEAR(h.last("loss"), h.last("dense_2_loss") + h.last("add_loss"), 1e-5);
}

// ---- checkpoints ----

nn::SymbolicTensor dense_residual(const nn::Input& in) {
  nn::SymbolicTensor h = nn::Dense(8, "relu")(in);
  nn::SymbolicTensor g = nn::Dense(8, "relu")(h);
  return nn::Dense(3)(nn::Add()({h, g}));
}

TEST(NnFunctional, CheckpointRoundTrip) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y;
  blobs(96, 6, &x, &y);
  const std::string path = ::testing::TempDir() + "nn_functional_ckpt.safetensors";
  auto in = nn::Input({4});
  nn::Model a(ctx, in, dense_residual(in));
  a.compile(nn::Adam(0.01), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, seeded(8));
  a.fit(x, y, quiet(2, 32));
  a.save_weights(path);

  auto in2 = nn::Input({4});
  nn::Model b(ctx, in2, dense_residual(in2));
  b.compile(nn::Adam(0.01), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, seeded(99));
  b.load_weights(path);
  expect_same_state(a, b);
  EXPECT_EQ(b.epoch(), 2);
  EXPECT_EQ(b.seed(), 8u);
  EXPECT_EQ(floats(a.predict(x)), floats(b.predict(x)));
  // Training on from the checkpoint equals training on without one.
  nn::FitOptions more = quiet(3, 32);
  more.initial_epoch = 2;
  a.fit(x, y, more);
  b.fit(x, y, more);
  expect_same_state(a, b);
  std::remove(path.c_str());
}

// ---- layers, initializers, regularizers ----

TEST(NnFunctional, ActivationByName) {
  dlrt::Context ctx = cpu_context();
  const std::string unknown = error_of([] { nn::Activation("relu7"); });
  EXPECT_NE(unknown.find("'relu7'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("linear, relu, sigmoid, tanh, softmax"), std::string::npos) << unknown;

  const std::vector<float> xs = {-2.f, -0.5f, 0.25f, 3.f};
  const nn::Array x = nn::Array::of<float>({1, 4}, xs);
  auto run = [&](const nn::Layer& layer) {
    auto in = nn::Input({4});
    nn::Model m(ctx, in, layer(in));
    m.compile(nn::SGD(0.1), nn::MeanSquaredError());
    return floats(m.predict(x));
  };
  EXPECT_EQ(run(nn::Activation("linear")), xs);
  EXPECT_EQ(run(nn::Activation("relu")), (std::vector<float>{0.f, 0.f, 0.25f, 3.f}));
  const std::vector<float> sig = run(nn::Activation("sigmoid"));
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(sig[i], 1.0 / (1.0 + std::exp(-xs[i])), 1e-6);
  const std::vector<float> lr = run(nn::LeakyReLU());  // alpha 0.3, as Keras' layer
  EXPECT_EQ(lr, (std::vector<float>{-0.6f, -0.15f, 0.25f, 3.f}));
  const std::vector<float> lr1 = run(nn::LeakyReLU(0.1));
  EXPECT_NEAR(lr1[0], -0.2f, 1e-7);

  // The activations of other branches map to their op only once the registry has it.
  for (const char* name : {"elu", "gelu", "silu", "swish", "hard_swish", "softplus", "mish"}) {
    const std::string op = std::string(name) == "swish" ? "silu" : name;
    if (has_op(op)) {
      const std::vector<float> out = run(nn::Activation(name));
      EXPECT_EQ(out.size(), 4u) << name;
      EXPECT_NEAR(out[3], 3.0, 0.2) << name << " is near identity at 3";
    } else {
      const std::string msg = error_of([&] { run(nn::Activation(name)); });
      EXPECT_NE(msg.find("needs the op '" + op + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("known here: linear, relu"), std::string::npos) << msg;
    }
  }
  // leaky_relu by name is keras.activations.leaky_relu: slope 0.2.
  EXPECT_EQ(run(nn::Activation("leaky_relu")), (std::vector<float>{-0.4f, -0.1f, 0.25f, 3.f}));
}

TEST(NnFunctional, InitializersOnesConstantGlorotNormal) {
  dlrt::Context ctx = cpu_context();
  nn::DenseOptions o;
  o.kernel_initializer = nn::Initializer::constant(0.5);
  o.bias_initializer = nn::Initializer::ones();
  nn::DenseOptions g;
  g.kernel_initializer = nn::Initializer::glorot_normal();
  auto in = nn::Input({256});
  nn::Model m(ctx, in, nn::Dense(256, g)(nn::Dense(256, o)(in)));
  m.compile(nn::SGD(0.1), nn::MeanSquaredError(), {}, seeded(3));
  const auto st = m.state();
  for (float v : value_of(st, "dense/kernel")) ASSERT_EQ(v, 0.5f);
  for (float v : value_of(st, "dense/bias")) ASSERT_EQ(v, 1.f);
  const std::vector<float>& w = value_of(st, "dense_1/kernel");
  double sum = 0, sq = 0;
  for (float v : w) {
    sum += v;
    sq += static_cast<double>(v) * v;
  }
  const double n = static_cast<double>(w.size()), mean = sum / n;
  const double sd = std::sqrt(sq / n - mean * mean), want = std::sqrt(2.0 / (256 + 256));
  EXPECT_NEAR(mean, 0.0, 0.002);
  EXPECT_NEAR(sd, want, 0.02 * want);
  EXPECT_EQ(nn::Initializer::named("ones").kind(), nn::Initializer::Kind::kOnes);
  EXPECT_EQ(nn::Initializer::named("glorot_normal").kind(), nn::Initializer::Kind::kGlorotNormal);
  error_of([] { nn::Initializer::constant(std::nan("")); });
}

TEST(NnFunctional, L2RegularizerJoinsTheLoss) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y;
  blobs(64, 4, &x, &y);
  auto model = [&](double l2) {
    nn::DenseOptions o;
    o.kernel_initializer = nn::Initializer::constant(0.5);
    if (l2 > 0) o.kernel_regularizer = nn::Regularizer::l2(l2);
    auto in = nn::Input({4});
    auto m = std::make_unique<nn::Model>(ctx, in, nn::Dense(3, o)(in));
    m->compile(nn::SGD(0.5), nn::SparseCategoricalCrossentropy(true), {}, seeded(5));
    return m;
  };
  auto plain = model(0), reg = model(0.1);
  // The kernel (4,3) of 0.5s: penalty 0.1 * 12 * 0.25 = 0.3, in evaluate's loss.
  EXPECT_NEAR(reg->evaluate(x, y)[0].second - plain->evaluate(x, y)[0].second, 0.3, 1e-5);
  // And in training: a strong penalty keeps the kernel smaller.
  auto strong = model(0.5);
  plain->fit(x, y, quiet(5, 16));
  strong->fit(x, y, quiet(5, 16));
  auto norm = [](nn::Model& m) {
    double s = 0;
    const auto st = m.state();
    for (float v : value_of(st, "dense/kernel")) s += static_cast<double>(v) * v;
    return s;
  };
  EXPECT_LT(norm(*strong), 0.5 * norm(*plain));
  error_of([] { nn::Regularizer::l2(-1.0); });
  // Conv2D takes one too.
  nn::Conv2DOptions co;
  co.kernel_regularizer = nn::Regularizer::l2(0.01);
  auto in = nn::Input({5, 5, 1});
  nn::Model c(ctx, in, nn::Conv2D(2, {3, 3}, co)(in));
  c.compile(nn::SGD(0.1), nn::MeanSquaredError());
  EXPECT_TRUE(c.plan().state[0].regularizer.active());
  EXPECT_FALSE(c.plan().state[1].regularizer.active());  // bias
}

// ---- callbacks ----

struct CountEpochs : nn::Callback {
  int epochs = 0;
  void on_epoch_end(nn::Model&, int64_t, const nn::Logs&) override { ++epochs; }
};
struct CountSequentialEpochs : nn::Callback {
  int epochs = 0;
  void on_epoch_end(nn::Sequential&, int64_t, const nn::Logs&) override { ++epochs; }
};

TEST(NnFunctional, CallbacksSeeEveryModelKind) {
  dlrt::Context ctx = cpu_context();
  nn::Array x, y;
  blobs(32, 1, &x, &y);
  auto any = std::make_shared<CountEpochs>();
  auto seq_only = std::make_shared<CountSequentialEpochs>();
  nn::FitOptions f = quiet(2, 16);
  f.callbacks = {any, seq_only};
  auto in = nn::Input({4});
  nn::Model fun(ctx, in, nn::Dense(3)(in));
  fun.compile(nn::SGD(0.1), nn::SparseCategoricalCrossentropy(true));
  fun.fit(x, y, f);
  EXPECT_EQ(any->epochs, 2);
  EXPECT_EQ(seq_only->epochs, 0);  // not a Sequential
  nn::Sequential seq(ctx, {nn::Input({4}), nn::Dense(3)});
  seq.compile(nn::SGD(0.1), nn::SparseCategoricalCrossentropy(true));
  seq.fit(x, y, f);
  EXPECT_EQ(any->epochs, 4);
  EXPECT_EQ(seq_only->epochs, 2);
}

}  // namespace
