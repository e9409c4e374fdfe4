// nn_recurrent_test.cc: nn::LSTM and nn::GRU (nn/recurrent.hpp) on the cpu plugin — Keras'
// parameters (names, shapes, glorot/orthogonal/unit-forget-bias first values), summary(),
// bad shapes refused naming the layer; predict equal to a plain C++ cell unrolled over T with
// the model's own weights (both return_sequences settings); the gradient one SGD step applies
// equal to central differences of the evaluated loss; and an Embedding + LSTM + Dense
// character model on Debian's fortunes that clearly beats the unigram entropy.
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nn_test_util.hpp"

namespace nn = dlrt::nn;

namespace {

using nn_test::cpu_context;
using nn_test::error_of;

nn::FitOptions quiet(int64_t epochs, int64_t batch) { return nn_test::quiet(epochs, batch, false); }

std::vector<float> random_values(size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

const nn::Model::NamedValue& named(const std::vector<nn::Model::NamedValue>& s,
                                   const std::string& name) {
  for (const auto& v : s)
    if (v.name == name) return v;
  throw dlrt::Error(DLRT_NOT_FOUND, "no state variable " + name);
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The host cells: x (B,T,I) row-major -> every step's h, (B,T,H). W (I,G*H), U (H,G*H).
std::vector<double> lstm_reference(const std::vector<float>& x, int64_t B, int64_t T, int64_t I,
                                   int64_t H, const std::vector<float>& W,
                                   const std::vector<float>& U, const std::vector<float>& b) {
  std::vector<double> out(size_t(B * T * H));
  for (int64_t n = 0; n < B; ++n) {
    std::vector<double> h(size_t(H), 0.0), c(size_t(H), 0.0), z(size_t(4 * H));
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t j = 0; j < 4 * H; ++j) {
        double acc = b[size_t(j)];
        for (int64_t k = 0; k < I; ++k)
          acc += double(x[size_t((n * T + t) * I + k)]) * W[size_t(k * 4 * H + j)];
        for (int64_t k = 0; k < H; ++k) acc += h[size_t(k)] * U[size_t(k * 4 * H + j)];
        z[size_t(j)] = acc;
      }
      for (int64_t j = 0; j < H; ++j) {  // gate order i, f, g, o
        const double i = sigmoid(z[size_t(j)]), f = sigmoid(z[size_t(H + j)]);
        const double g = std::tanh(z[size_t(2 * H + j)]), o = sigmoid(z[size_t(3 * H + j)]);
        c[size_t(j)] = f * c[size_t(j)] + i * g;
        h[size_t(j)] = o * std::tanh(c[size_t(j)]);
        out[size_t((n * T + t) * H + j)] = h[size_t(j)];
      }
    }
  }
  return out;
}

// Keras' GRUCell with reset_after: gate order z, r, h; b (2,3H) = input bias, recurrent bias.
std::vector<double> gru_reference(const std::vector<float>& x, int64_t B, int64_t T, int64_t I,
                                  int64_t H, const std::vector<float>& W,
                                  const std::vector<float>& U, const std::vector<float>& b) {
  std::vector<double> out(size_t(B * T * H));
  for (int64_t n = 0; n < B; ++n) {
    std::vector<double> h(size_t(H), 0.0), xp(size_t(3 * H)), rp(size_t(3 * H));
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t j = 0; j < 3 * H; ++j) {
        double ax = b[size_t(j)], ar = b[size_t(3 * H + j)];
        for (int64_t k = 0; k < I; ++k)
          ax += double(x[size_t((n * T + t) * I + k)]) * W[size_t(k * 3 * H + j)];
        for (int64_t k = 0; k < H; ++k) ar += h[size_t(k)] * U[size_t(k * 3 * H + j)];
        xp[size_t(j)] = ax;
        rp[size_t(j)] = ar;
      }
      for (int64_t j = 0; j < H; ++j) {
        const double z = sigmoid(xp[size_t(j)] + rp[size_t(j)]);
        const double r = sigmoid(xp[size_t(H + j)] + rp[size_t(H + j)]);
        const double hh = std::tanh(xp[size_t(2 * H + j)] + r * rp[size_t(2 * H + j)]);
        h[size_t(j)] = z * h[size_t(j)] + (1 - z) * hh;
        out[size_t((n * T + t) * H + j)] = h[size_t(j)];
      }
    }
  }
  return out;
}

TEST(NnRecurrent, ParamsAreKerasAndSummaryShowsThem) {
  dlrt::Context ctx = cpu_context();
  const int64_t T = 6, I = 5, H = 4;
  nn::Sequential m(ctx, {nn::Input({T, I}), nn::LSTM(H, true), nn::GRU(3)});
  m.compile(nn::Adam(), nn::MeanSquaredError());
  const auto s = m.state();
  const auto& k = named(s, "lstm/kernel");
  const auto& u = named(s, "lstm/recurrent_kernel");
  const auto& b = named(s, "lstm/bias");
  EXPECT_EQ(k.dims, (nn::Shape{I, 4 * H}));
  EXPECT_EQ(u.dims, (nn::Shape{H, 4 * H}));
  EXPECT_EQ(b.dims, (nn::Shape{4 * H}));
  // glorot_uniform: within sqrt(6 / (I + 4H)), not all equal
  const double lim = std::sqrt(6.0 / double(I + 4 * H));
  for (float v : k.values) EXPECT_LE(std::abs(v), lim);
  EXPECT_NE(k.values[0], k.values[1]);
  // orthogonal (H, 4H): orthonormal rows, U U^T = I
  for (int64_t r = 0; r < H; ++r)
    for (int64_t q = 0; q < H; ++q) {
      double dot = 0;
      for (int64_t j = 0; j < 4 * H; ++j)
        dot += double(u.values[size_t(r * 4 * H + j)]) * u.values[size_t(q * 4 * H + j)];
      EXPECT_NEAR(dot, r == q ? 1.0 : 0.0, 1e-5) << r << "," << q;
    }
  // unit_forget_bias: zeros, the forget block [H, 2H) ones
  for (int64_t j = 0; j < 4 * H; ++j) EXPECT_EQ(b.values[size_t(j)], j >= H && j < 2 * H ? 1.f : 0.f);

  EXPECT_EQ(named(s, "gru/kernel").dims, (nn::Shape{H, 9}));
  const auto& gu = named(s, "gru/recurrent_kernel");
  EXPECT_EQ(gu.dims, (nn::Shape{3, 9}));
  EXPECT_EQ(named(s, "gru/bias").dims, (nn::Shape{2, 9}));
  EXPECT_EQ(named(s, "gru/bias").values, std::vector<float>(18, 0.f));

  std::ostringstream out;
  m.summary(out);
  const std::string text = out.str();
  EXPECT_NE(text.find("lstm (LSTM)"), std::string::npos) << text;
  EXPECT_NE(text.find("(None, 6, 4)"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(4 * H * (I + H + 1))), std::string::npos) << text;  // 160
  EXPECT_NE(text.find("gru (GRU)"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(3 * 3 * (H + 3) + 2 * 9)), std::string::npos) << text;  // 81

  // The orthogonal draws are seeded: another model seed, other values; the same, the same.
  nn::Sequential again(ctx, {nn::Input({T, I}), nn::LSTM(H, true), nn::GRU(3)});
  again.compile(nn::Adam(), nn::MeanSquaredError());
  EXPECT_EQ(named(again.state(), "lstm/recurrent_kernel").values, u.values);
  nn::Sequential other(ctx, {nn::Input({T, I}), nn::LSTM(H, true), nn::GRU(3)});
  nn::CompileConfig cfg;
  cfg.seed = 99;
  other.compile(nn::Adam(), nn::MeanSquaredError(), {}, cfg);
  EXPECT_NE(named(other.state(), "lstm/recurrent_kernel").values, u.values);
}

// Initializer::orthogonal on its own: (rows, cols) with orthonormal columns when rows > cols,
// rows when rows < cols, scaled by the gain; seeded; rank 1 refused. lstm_unit_forget_bias
// needs (4H).
TEST(NnRecurrent, OrthogonalAndForgetBiasInitializers) {
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{6, 3}, {3, 6}, {5, 5}}) {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
    const std::vector<float> q = nn::Initializer::orthogonal(2.0).host_values({rows, cols}, 7);
    const bool by_col = rows >= cols;
    const int64_t k = by_col ? cols : rows, len = by_col ? rows : cols;
    auto at = [&](int64_t vec, int64_t i) {
      return double(by_col ? q[size_t(i * cols + vec)] : q[size_t(vec * cols + i)]);
    };
    for (int64_t a = 0; a < k; ++a)
      for (int64_t b = 0; b < k; ++b) {
        double dot = 0;
        for (int64_t i = 0; i < len; ++i) dot += at(a, i) * at(b, i);
        EXPECT_NEAR(dot, a == b ? 4.0 : 0.0, 1e-5);  // gain 2: norms 2
      }
    EXPECT_EQ(q, nn::Initializer::orthogonal(2.0).host_values({rows, cols}, 7));
    EXPECT_NE(q, nn::Initializer::orthogonal(2.0).host_values({rows, cols}, 8));
  }
  EXPECT_TRUE(nn::Initializer::named("orthogonal").on_host());
  EXPECT_EQ(error_of([] { nn::Initializer::orthogonal().host_values({4}, 1); }).first,
            DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(nn::Initializer::lstm_unit_forget_bias().host_values({8}, 0),
            (std::vector<float>{0, 0, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(error_of([] { nn::Initializer::lstm_unit_forget_bias().host_values({6}, 0); }).first,
            DLRT_INVALID_ARGUMENT);
}

TEST(NnRecurrent, BadShapesAndUnitsAreClearErrors) {
  dlrt::Context ctx = cpu_context();
  EXPECT_EQ(error_of([] { nn::LSTM(0); }).first, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(error_of([] { nn::GRU(-2); }).first, DLRT_INVALID_ARGUMENT);
  for (bool gru : {false, true}) {
    nn::Sequential m = gru ? nn::Sequential(ctx, {nn::Input({5}), nn::GRU(3)})
                           : nn::Sequential(ctx, {nn::Input({5}), nn::LSTM(3)});
    auto [code, msg] = error_of([&] { m.compile(nn::Adam(), nn::MeanSquaredError()); });
    EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
    const std::string who = gru ? "gru (GRU): input shape (None, 5)" : "lstm (LSTM): input shape (None, 5)";
    EXPECT_NE(msg.find(who), std::string::npos) << msg;
    EXPECT_NE(msg.find("(None, T, features)"), std::string::npos) << msg;
  }
  auto image = nn::Input({4, 4, 2});
  auto [code, msg] = error_of([&] { nn::LSTM(3)(image); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("lstm (LSTM): input shape (None, 4, 4, 2)"), std::string::npos) << msg;
}

// predict == the host cell unrolled over T with the model's weights, for several B, T, I, H
// (T = 1 too), both return_sequences settings; the weights are random (set_state) so that the
// gates are far from their initial values.
TEST(NnRecurrent, PredictEqualsTheHostCellUnrolled) {
  dlrt::Context ctx = cpu_context();
  struct Case {
    int64_t b, t, i, h;
  };
  for (bool gru : {false, true})
    for (const Case& k : {Case{3, 5, 4, 6}, Case{2, 1, 3, 2}, Case{5, 9, 1, 9}})
      for (bool seq : {false, true}) {
        SCOPED_TRACE(std::string(gru ? "GRU" : "LSTM") + " B " + std::to_string(k.b) + " T " +
                     std::to_string(k.t) + " I " + std::to_string(k.i) + " H " +
                     std::to_string(k.h) + (seq ? " sequences" : " last"));
        nn::Sequential m = gru ? nn::Sequential(ctx, {nn::Input({k.t, k.i}), nn::GRU(k.h, seq)})
                               : nn::Sequential(ctx, {nn::Input({k.t, k.i}), nn::LSTM(k.h, seq)});
        m.compile(nn::SGD(0.1), nn::MeanSquaredError());
        const std::string p = gru ? "gru/" : "lstm/";
        std::vector<nn::Model::NamedValue> w = {named(m.state(), p + "kernel"),
                                                named(m.state(), p + "recurrent_kernel"),
                                                named(m.state(), p + "bias")};
        unsigned seed = 10;
        for (auto& v : w) v.values = random_values(v.values.size(), seed++, -0.8f, 0.8f);
        m.set_state(w);
        const std::vector<float> x = random_values(size_t(k.b * k.t * k.i), 3, -1.5f, 1.5f);
        const std::vector<float> got =
            m.predict(nn::Array::of<float>({k.b, k.t, k.i}, x)).values<float>();
        const std::vector<double> want =
            gru ? gru_reference(x, k.b, k.t, k.i, k.h, w[0].values, w[1].values, w[2].values)
                : lstm_reference(x, k.b, k.t, k.i, k.h, w[0].values, w[1].values, w[2].values);
        ASSERT_EQ(got.size(), size_t(k.b * (seq ? k.t : 1) * k.h));
        for (int64_t n = 0; n < k.b; ++n)
          for (int64_t t = seq ? 0 : k.t - 1; t < k.t; ++t)
            for (int64_t j = 0; j < k.h; ++j) {
              const size_t g = size_t(seq ? (n * k.t + t) * k.h + j : n * k.h + j);
              EXPECT_NEAR(got[g], want[size_t((n * k.t + t) * k.h + j)], 2e-5)
                  << "b " << n << " t " << t << " j " << j;
            }
      }
}

// The gradient the training step applies: with plain SGD at lr 1, one step of one batch moves
// each weight by -dloss/dw. Against central differences of evaluate()'s loss over the same
// batch, every weight of the layer (kernel, recurrent kernel, bias), for LSTM (every step's h
// used, and only the last: c' and the unread h' then have no gradient) and GRU.
TEST(NnRecurrent, TrainingGradientMatchesFiniteDifferences) {
  dlrt::Context ctx = cpu_context();
  const int64_t B = 3, T = 4, I = 3, H = 2;
  for (int variant = 0; variant < 3; ++variant) {  // LSTM sequences, LSTM last, GRU sequences
    SCOPED_TRACE(variant);
    const bool gru = variant == 2, seq = variant != 1;
    auto make = [&] {
      return gru ? nn::Sequential(ctx, {nn::Input({T, I}), nn::GRU(H, seq)})
                 : nn::Sequential(ctx, {nn::Input({T, I}), nn::LSTM(H, seq)});
    };
    const nn::Array x = nn::Array::of<float>({B, T, I}, random_values(size_t(B * T * I), 5, -1, 1));
    const nn::Shape yd = seq ? nn::Shape{B, T, H} : nn::Shape{B, H};
    const nn::Array y = nn::Array::of<float>(yd, random_values(size_t(B * (seq ? T : 1) * H), 6, -1, 1));
    const std::string p = gru ? "gru/" : "lstm/";
    const std::vector<std::string> names = {p + "kernel", p + "recurrent_kernel", p + "bias"};

    nn::Sequential m = make();
    m.compile(nn::SGD(1.0), nn::MeanSquaredError());
    std::vector<nn::Model::NamedValue> w0;
    unsigned seed = 20;
    for (const std::string& n : names) {
      w0.push_back(named(m.state(), n));
      w0.back().values = random_values(w0.back().values.size(), seed++, -0.7f, 0.7f);
    }
    m.set_state(w0);
    m.fit(x, y, quiet(1, B));
    const auto after = m.state();

    nn::Sequential probe = make();
    probe.compile(nn::SGD(1.0), nn::MeanSquaredError());
    const double eps = 1e-2;
    for (size_t v = 0; v < w0.size(); ++v) {
      const std::vector<float> moved = named(after, names[v]).values;
      for (size_t e = 0; e < w0[v].values.size(); ++e) {
        std::vector<nn::Model::NamedValue> w = w0;
        w[v].values[e] += float(eps);
        probe.set_state(w);
        const double up = probe.evaluate(x, y, B).at(0).second;
        w[v].values[e] -= float(2 * eps);
        probe.set_state(w);
        const double down = probe.evaluate(x, y, B).at(0).second;
        const double numeric = (up - down) / (2 * eps);
        const double analytic = double(w0[v].values[e]) - double(moved[e]);
        EXPECT_NEAR(analytic, numeric, 2e-3 * std::max(1.0, std::abs(numeric)))
            << names[v] << "[" << e << "]";
      }
    }
  }
}

// Debian's fortunes as bytes: Embedding(256, 32) -> LSTM(96, return_sequences) -> Dense(256),
// the next byte at every position. 300 Adam steps of 64 windows must beat the unigram entropy of
// the validation text by a clear margin (context matters: the bigram-only model of
// nn_text_test beats it by 0.6 bits; a broken recurrence would sit near the unigram). It
// reaches 3.36 bits against the unigram's 4.87, in about 4 s on 2 idle cores (on a loaded
// machine libgomp's spinning barriers can make it ten times slower: OMP_WAIT_POLICY=passive).
TEST(NnRecurrent, LstmCharModelOnFortunesBeatsTheUnigramEntropy) {
  const char* kFortunes = "/usr/share/games/fortunes";
  if (!std::filesystem::exists(kFortunes)) GTEST_SKIP() << "no fortunes corpus in " << kFortunes;
  const nn::TextCorpus corpus = nn::TextCorpus::read(kFortunes);
  auto [train, val] = corpus.split(0.1);
  std::vector<double> freq(256, 1.0);
  for (uint8_t b : train.bytes()) freq[b] += 1.0;
  double total = 0, unigram_bits = 0;
  for (double f : freq) total += f;
  for (uint8_t b : val.bytes()) unigram_bits -= std::log2(freq[b] / total);
  unigram_bits /= static_cast<double>(val.size());

  const int64_t T = 32;
  const nn::TextWindows tw = train.windows(T, 9600, 1);
  const nn::TextWindows vw = val.windows(T, 256, 2);
  dlrt::Context ctx = cpu_context();
  nn::Sequential m(ctx, {nn::Input({T}), nn::Embedding(256, 32), nn::LSTM(96, true),
                         nn::Dense(256)});
  nn::CompileConfig cfg;
  cfg.seed = 3;
  m.compile(nn::Adam(1e-2), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, cfg);
  m.fit(tw.x, tw.y, quiet(2, 64));  // 300 steps
  const nn::Logs logs = m.evaluate(vw.x, vw.y, 64);
  const double bits = logs.at(0).second / std::log(2.0);
  std::printf("LSTM char model: %.3f bits/char after 300 steps; unigram %.3f\n", bits,
              unigram_bits);
  EXPECT_LT(bits, unigram_bits - 1.2) << "loss " << logs.at(0).second << " nats/char, unigram "
                                      << unigram_bits << " bits";
}

}  // namespace
