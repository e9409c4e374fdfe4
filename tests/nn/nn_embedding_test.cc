// nn_embedding_test.cc: Embedding as Keras has it — the lookup equals the rows of its weights
// (i32 and i64 ids, ids of rank 1 and 2 per sample), the Keras initial range, the summary
// line, clear errors for bad ids (the model's host check, and the gather kernels of the cpu
// and reference devices themselves), and a small model that learns a real task: Fashion-MNIST
// images turned into sequences of byte ids (each 4x4 block's mean quantised to 8 levels,
// offset by the block's position), Embedding -> Flatten -> Dense. Training twice from the
// same seed gives the same bits (scatter_add, the gradient, is deterministic).
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "nn_test_util.hpp"

namespace nn = dlrt::nn;
using nn_test::error_of;

namespace {

dlrt::Context context(const char* devices = "CPU") {
  dlrt::ContextOptions o;
  o.plugin_path(DLRT_TEST_PLUGIN_DIR)
      .search_default_paths(false)
      .plugin_options("")
      .visible_devices(devices)
      .log_level(DLRT_LOG_ERROR);
  return dlrt::Context(o);
}

// A copy: Model::state() returns a fresh vector.
nn::Model::NamedValue find_state(const std::vector<nn::Model::NamedValue>& s,
                                 const std::string& name) {
  for (const auto& v : s)
    if (v.name == name) return v;
  throw std::runtime_error("no state variable " + name);
}

TEST(NnEmbedding, LookupEqualsTheWeightRows) {
  dlrt::Context ctx = context();
  nn::Sequential m(ctx, {nn::Input({2, 3}), nn::Embedding(10, 4)});
  m.compile(nn::SGD(0.1), nn::MeanSquaredError());
  const std::vector<int32_t> ids = {3, 0, 9, 3, 7, 7, 1, 2, 9, 0, 5, 3};  // 2 samples (2,3)
  const nn::Array y = m.predict(nn::Array::of<int32_t>({2, 2, 3}, ids));
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 2, 3, 4}));
  const auto w = find_state(m.state(), "embedding/embeddings");
  ASSERT_EQ(w.dims, (nn::Shape{10, 4}));
  for (float v : w.values) {  // Keras' uniform(-0.05, 0.05)
    EXPECT_GE(v, -0.05f);
    EXPECT_LT(v, 0.05f);
  }
  const std::vector<float> got = y.values<float>();
  for (size_t i = 0; i < ids.size(); ++i)
    for (size_t k = 0; k < 4; ++k)
      EXPECT_EQ(got[i * 4 + k], w.values[size_t(ids[i]) * 4 + k]) << "id " << ids[i];

  // i64 ids, rank 1 per sample, through a functional model.
  auto in = nn::Input({5});
  nn::Model f(ctx, in, nn::Embedding(6, 3)(in));
  f.compile(nn::SGD(0.1), nn::MeanSquaredError());
  const std::vector<int64_t> ids64 = {5, 4, 0, 0, 1};
  const std::vector<float> g = f.predict(nn::Array::of<int64_t>({1, 5}, ids64)).values<float>();
  const auto w2 = find_state(f.state(), "embedding/embeddings");
  for (size_t i = 0; i < ids64.size(); ++i)
    for (size_t k = 0; k < 3; ++k) EXPECT_EQ(g[i * 3 + k], w2.values[size_t(ids64[i]) * 3 + k]);
}

TEST(NnEmbedding, SummaryAndShapes) {
  dlrt::Context ctx(dlrt::ContextOptions().search_default_paths(false));
  EXPECT_EQ(nn::Embedding(100, 8)(nn::Input({12})).shape(), nn::Shape({12, 8}));
  EXPECT_EQ(nn::Embedding(100, 8)(nn::Input({3, 4})).shape(), nn::Shape({3, 4, 8}));
  nn::Sequential m(ctx, {nn::Input({12}), nn::Embedding(100, 8), nn::Flatten(), nn::Dense(2)});
  std::ostringstream out;
  m.summary(out);
  EXPECT_NE(out.str().find("embedding (Embedding)        (None, 12, 8)             800"),
            std::string::npos)
      << out.str();
  EXPECT_THROW(nn::Embedding(0, 8), dlrt::Error);
  EXPECT_THROW(nn::Embedding(8, 0), dlrt::Error);
}

TEST(NnEmbedding, BadIdsGiveAClearError) {
  dlrt::Context ctx = context();
  nn::Sequential m(ctx, {nn::Input({3}), nn::Embedding(10, 4)});
  m.compile(nn::SGD(0.1), nn::MeanSquaredError());
  auto [code, msg] = error_of([&] { m.predict(nn::Array::of<int32_t>({2, 3}, {1, 2, 3, 4, 10, 0})); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("id 10 (sample 1, element 1), outside [0, 10)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("input_dim is 10"), std::string::npos) << msg;
  std::tie(code, msg) = error_of([&] { m.predict(nn::Array::of<int64_t>({1, 3}, {-1, 0, 0})); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("id -1"), std::string::npos) << msg;
  // Float x: the Embedding takes ids.
  std::tie(code, msg) = error_of([&] { m.predict(nn::Array::of<float>({1, 3}, {1, 0, 0})); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("i32 or i64 ids"), std::string::npos) << msg;
}

// The gather kernels themselves (no model check in front): cpu and reference return
// INVALID_ARGUMENT naming the id, where it is and the row count.
TEST(NnEmbedding, GatherKernelsRefuseOutOfRangeIds) {
  for (const char* devices : {"CPU", "REF"}) {
    SCOPED_TRACE(devices);
    dlrt::Context ctx = context(devices);
    if (ctx.device_count() == 0) GTEST_SKIP() << "no " << devices << " device";
    dlrt::Graph g(ctx);
    dlrt::Value params = g.constant<float>("params", {4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
    dlrt::Value ids = g.placeholder("ids", DLRT_I32, {3});
    dlrt::Value y = g.op1("gather", {params, ids});
    dlrt::Executable exe = g.compile({ids}, {y});
    dlrt::Tensor t = dlrt::Tensor::create(ctx, 0, DLRT_I32, {3});
    t.write<int32_t>({3, 0, 2});
    std::vector<dlrt::Tensor> out(1);
    exe.run({&t}, out);
    EXPECT_EQ(out[0].read<float>(), (std::vector<float>{6, 7, 0, 1, 4, 5}));
    t.write<int32_t>({3, 4, 2});
    auto [code, msg] = error_of([&] { exe.run({&t}, out); });
    EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
    EXPECT_NE(msg.find("indices[1] (flat) is 4, outside [0, 4)"), std::string::npos) << msg;
  }
}

// Fashion-MNIST as sequences: 49 tokens per image, token = position * 8 + level, level the
// 4x4 block's mean pixel quantised to 8 levels (a vocabulary of 392 ids).
nn::Array fashion_tokens(const std::string& images, int64_t n) {
  dlrt::IdxArray im(images, n);
  const uint8_t* px = im.data<uint8_t>();
  std::vector<int32_t> ids(size_t(n * 49));
  for (int64_t s = 0; s < n; ++s)
    for (int64_t by = 0; by < 7; ++by)
      for (int64_t bx = 0; bx < 7; ++bx) {
        int sum = 0;
        for (int64_t y = 0; y < 4; ++y)
          for (int64_t x = 0; x < 4; ++x) sum += px[s * 784 + (by * 4 + y) * 28 + bx * 4 + x];
        const int level = sum / 16 / 32;  // mean in [0, 255] -> 0..7
        const int64_t pos = by * 7 + bx;
        ids[size_t(s * 49 + pos)] = static_cast<int32_t>(pos * 8 + level);
      }
  return nn::Array::of<int32_t>({n, 49}, ids);
}

TEST(NnEmbedding, SmallModelLearnsFashionMnistTokens) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  std::FILE* probe = std::fopen((dir + "train-images-idx3-ubyte.gz").c_str(), "rb");
  if (probe == nullptr) GTEST_SKIP() << "no Fashion-MNIST in " << dir;
  std::fclose(probe);
  const int64_t n = 1000;
  const nn::Array x = fashion_tokens(dir + "train-images-idx3-ubyte.gz", n);
  dlrt::IdxArray labels(dir + "train-labels-idx1-ubyte.gz", n);
  const uint8_t* lb = labels.data<uint8_t>();
  const nn::Array y(DLRT_U8, {n}, std::vector<uint8_t>(lb, lb + n));
  const int64_t nt = 500;  // held out: the test set's first images
  const nn::Array xt = fashion_tokens(dir + "t10k-images-idx3-ubyte.gz", nt);
  dlrt::IdxArray tl(dir + "t10k-labels-idx1-ubyte.gz", nt);
  const uint8_t* tlb = tl.data<uint8_t>();
  const nn::Array yt(DLRT_U8, {nt}, std::vector<uint8_t>(tlb, tlb + nt));

  dlrt::Context ctx = context();
  auto train = [&](int epochs) {
    auto m = std::make_unique<nn::Sequential>(
        ctx, std::initializer_list<nn::LayerRef>{nn::Input({49}), nn::Embedding(392, 8), nn::Flatten(),
                                       nn::Dense(10)});
    nn::CompileConfig cfg;
    cfg.seed = 5;
    m->compile(nn::Adam(1e-2), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, cfg);
    nn::FitOptions f;
    f.epochs = epochs;
    f.batch_size = 50;
    f.shuffle = true;
    f.progress.verbose = 0;
    nn::History h = m->fit(x, y, f);
    return std::make_pair(std::move(m), std::move(h));
  };
  auto [m, h] = train(8);  // measured: loss 1.65 -> 0.24, held-out accuracy 0.73
  const std::vector<double>& loss = h.history.at("loss");
  EXPECT_LT(loss.back(), 0.5 * loss.front());
  const nn::Logs test = m->evaluate(xt, yt);
  double acc = 0;
  for (const auto& [name, v] : test)
    if (name == "accuracy") acc = v;
  EXPECT_GE(acc, 0.65) << "held-out accuracy";  // chance is 0.1

  // The same seed, the same bits: the embedding gradient (scatter_add) sums in a fixed order.
  auto [m1, h1] = train(1);
  auto [m2, h2] = train(1);
  const auto a = find_state(m1->state(), "embedding/embeddings");
  const auto b = find_state(m2->state(), "embedding/embeddings");
  ASSERT_EQ(a.values.size(), b.values.size());
  EXPECT_EQ(0, std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)));
}

}  // namespace
