// nn_attention_test.cc: MultiHeadAttention, TransformerBlock and TokenAndPositionEmbedding
// (nn/attention.hpp, nn/transformer.hpp) against host-side loops over the layers' own weights
// (read back from the model), on the cpu plugin and the reference oracle; the shapes and
// errors a user meets; attention masks (the loops, masked keys that do not matter, a query
// with nothing to attend to, the gradient against the unmasked path and finite
// differences); the dropout (materialised) path training; a tiny GPT learning text.
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "nn_test_util.hpp"

namespace nn = dlrt::nn;

namespace {

using nn_test::error_of;
using Weights = std::map<std::string, std::vector<float>>;

Weights weights_of(nn::Model& m) {
  Weights w;
  for (const nn::Model::NamedValue& v : m.state()) w[v.name] = v.values;
  return w;
}

// This build's plugins, the CPU and the reference oracle visible.
dlrt::Context cpu_and_reference() {
  dlrt::ContextOptions o;
  o.plugin_path(DLRT_TEST_PLUGIN_DIR)
      .search_default_paths(false)
      .plugin_options("")
      .visible_devices("CPU,REF")
      .log_level(DLRT_LOG_ERROR);
  return dlrt::Context(o);
}

nn::CompileConfig on(const std::string& device, uint64_t seed = 1) {
  nn::CompileConfig c;
  c.device = device;
  c.seed = seed;
  return c;
}

// A deterministic pseudo-random array (B, dims...) of floats in [-1, 1).
nn::Array noise(std::vector<int64_t> dims, unsigned seed) {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1 << 24) * 2.f - 1.f;
  }
  return nn::Array::of<float>(std::move(dims), v);
}

// y (T, N) = x (T, K) W (K, N) + b (N) for one sample.
std::vector<double> dense(const std::vector<double>& x, int64_t t, int64_t k,
                          const std::vector<float>& w, const std::vector<float>& b, int64_t n) {
  std::vector<double> y(static_cast<size_t>(t * n));
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = b.empty() ? 0.0 : b[j];
      for (int64_t q = 0; q < k; ++q) s += x[i * k + q] * w[q * n + j];
      y[i * n + j] = s;
    }
  return y;
}

// Multi-head attention of one sample: query (tq, dq), value = key (tk, dv) -> (tq, dq).
// `mask` (mask_rows = 1 or tq, tk), when given, is the sample's attention_mask: where it is
// 0 the score becomes -1e9 (the layer adds -1e9 in f32, which swallows the score), so a
// query whose keys are all masked attends evenly to them.
std::vector<double> mha_ref(const std::vector<double>& query, const std::vector<double>& kv,
                            int64_t tq, int64_t tk, int64_t dq, int64_t dkv, int64_t heads,
                            int64_t dh, bool causal, Weights& w, const std::string& p,
                            const float* mask = nullptr, int64_t mask_rows = 1) {
  const int64_t hd = heads * dh;
  const auto q = dense(query, tq, dq, w[p + "/query/kernel"], w[p + "/query/bias"], hd);
  const auto k = dense(kv, tk, dkv, w[p + "/key/kernel"], w[p + "/key/bias"], hd);
  const auto v = dense(kv, tk, dkv, w[p + "/value/kernel"], w[p + "/value/bias"], hd);
  std::vector<double> o(static_cast<size_t>(tq * hd), 0.0);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < tq; ++i) {
      std::vector<double> s(static_cast<size_t>(tk));
      double mx = -1e300;
      for (int64_t j = 0; j < tk; ++j) {
        double d = 0;
        for (int64_t e = 0; e < dh; ++e) d += q[i * hd + h * dh + e] * k[j * hd + h * dh + e];
        s[j] = (causal && j > i + (tk - tq)) ? -1e300 : d / std::sqrt(double(dh));
        if (mask && s[j] > -1e299 && mask[(mask_rows == 1 ? 0 : i) * tk + j] == 0.f) s[j] = -1e9;
        mx = std::max(mx, s[j]);
      }
      double z = 0;
      for (double& x : s) z += (x = x <= -1e299 ? 0.0 : std::exp(x - mx));
      for (int64_t j = 0; j < tk; ++j)
        for (int64_t e = 0; e < dh; ++e) o[i * hd + h * dh + e] += s[j] / z * v[j * hd + h * dh + e];
    }
  return dense(o, tq, hd, w[p + "/attention_output/kernel"], w[p + "/attention_output/bias"], dq);
}

std::vector<double> to_double(const std::vector<float>& v, size_t from, size_t n) {
  return std::vector<double>(v.begin() + from, v.begin() + from + n);
}

}  // namespace

class NnAttentionDevices : public ::testing::TestWithParam<std::string> {};

TEST_P(NnAttentionDevices, SelfAttentionMatchesLoopsCausalAndNot) {
  dlrt::Context ctx = cpu_and_reference();
  const int64_t B = 2, T = 5, D = 6, H = 2, dh = 3;
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "full");
    nn::MultiHeadAttentionOptions o;
    o.use_causal_mask = causal;
    auto in = nn::Input({T, D});
    nn::Model m(ctx, in, nn::MultiHeadAttention(H, dh, o)(in));
    m.compile(nn::SGD(0.1), nn::MeanSquaredError(), {}, on(GetParam(), causal ? 5 : 6));
    const nn::Array x = noise({B, T, D}, 3);
    const std::vector<float> y = m.predict(x, B).values<float>();
    Weights w = weights_of(m);
    const std::vector<float> xs = x.values<float>();
    for (int64_t b = 0; b < B; ++b) {
      const auto s = to_double(xs, b * T * D, T * D);
      const auto want = mha_ref(s, s, T, T, D, D, H, dh, causal, w, "multi_head_attention");
      for (int64_t i = 0; i < T * D; ++i)
        EXPECT_NEAR(y[b * T * D + i], want[i], 1e-4) << "b " << b << " i " << i;
    }
  }
}

TEST_P(NnAttentionDevices, CrossAttentionTakesItsOwnWidthsAndCausalAlignment) {
  // query = Dense(Dq)(x) (T, Dq) attends to value = key = x (T, Dv); no bias in the layer.
  dlrt::Context ctx = cpu_and_reference();
  const int64_t B = 2, T = 6, Dq = 4, Dv = 5, H = 3, dh = 2;
  auto in = nn::Input({T, Dv});
  nn::SymbolicTensor q = nn::Dense(Dq)(in);
  nn::MultiHeadAttentionOptions o;
  o.use_causal_mask = true;
  o.use_bias = false;
  o.value_dim = 3;
  nn::MultiHeadAttention mha(H, dh, o);
  EXPECT_EQ(mha.value_dim(), 3);
  o.value_dim = 0;
  nn::SymbolicTensor y = nn::MultiHeadAttention(H, dh, o)({q, in});
  EXPECT_EQ(y.shape(), (nn::Shape{T, Dq}));
  nn::Model m(ctx, in, y);
  m.compile(nn::SGD(0.1), nn::MeanSquaredError(), {}, on(GetParam(), 9));
  const nn::Array x = noise({B, T, Dv}, 2);
  const std::vector<float> got = m.predict(x, B).values<float>();
  Weights w = weights_of(m);
  EXPECT_EQ(w.count("multi_head_attention/query/bias"), 0u);
  const std::vector<float> xs = x.values<float>();
  for (int64_t b = 0; b < B; ++b) {
    const auto xb = to_double(xs, b * T * Dv, T * Dv);
    const auto qb = dense(xb, T, Dv, w["dense/kernel"], w["dense/bias"], Dq);
    const auto want = mha_ref(qb, xb, T, T, Dq, Dv, H, dh, true, w, "multi_head_attention");
    for (int64_t i = 0; i < T * Dq; ++i) EXPECT_NEAR(got[b * T * Dq + i], want[i], 1e-4);
  }
}

// attention_mask (Keras'): a key padding mask (None, 1, Tk) and a full (None, Tq, Tk) one,
// with and without the causal mask, against the loops; the masked keys' values and keys can
// be anything (the output does not change); a query whose keys are all masked is finite and
// attends evenly.
TEST_P(NnAttentionDevices, AttentionMaskMatchesLoopsAndMaskedKeysDoNotMatter) {
  dlrt::Context ctx = cpu_and_reference();
  const int64_t B = 2, Tq = 4, Tk = 5, D = 6, H = 2, dh = 3;
  // Sample 0: keys 3 and 4 are padding; sample 1: keys 0 and 2.
  const std::vector<float> keys = {1, 1, 1, 0, 0, 0, 1, 0, 1, 1};
  // Per sample (Tq, Tk); sample 1's query 2 may attend to nothing.
  const std::vector<float> full = {1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1,
                                   1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1};
  for (bool causal : {false, true})
    for (int64_t rows : {int64_t(1), Tq}) {
      SCOPED_TRACE(std::string(causal ? "causal" : "full") + ", mask rows " +
                   std::to_string(rows));
      nn::MultiHeadAttentionOptions o;
      o.use_causal_mask = causal;
      auto q_in = nn::Input({Tq, D});
      auto kv_in = nn::Input({Tk, D});
      auto mask_in = nn::Input({rows, Tk});
      nn::SymbolicTensor y = nn::MultiHeadAttention(H, dh, o)({q_in, kv_in, kv_in, mask_in});
      EXPECT_EQ(y.shape(), (nn::Shape{Tq, D}));
      nn::Model m(ctx, {q_in, kv_in, mask_in}, {y});
      m.compile(nn::SGD(0.1), nn::MeanSquaredError(), {}, on(GetParam(), 7));
      const std::vector<float>& mv = rows == 1 ? keys : full;
      const nn::Array xq = noise({B, Tq, D}, 4), xkv = noise({B, Tk, D}, 5);
      const nn::Array mask = nn::Array::of<float>({B, rows, Tk}, mv);
      const std::vector<float> got = m.predict({xq, xkv, mask}, B).at(0).values<float>();
      Weights w = weights_of(m);
      const std::vector<float> qs = xq.values<float>(), kvs = xkv.values<float>();
      for (int64_t b = 0; b < B; ++b) {
        const auto want = mha_ref(to_double(qs, b * Tq * D, Tq * D),
                                  to_double(kvs, b * Tk * D, Tk * D), Tq, Tk, D, D, H, dh, causal,
                                  w, "multi_head_attention", mv.data() + b * rows * Tk, rows);
        for (int64_t i = 0; i < Tq * D; ++i) {
          ASSERT_TRUE(std::isfinite(got[b * Tq * D + i])) << "b " << b << " i " << i;
          EXPECT_NEAR(got[b * Tq * D + i], want[i], 1e-4) << "b " << b << " i " << i;
        }
      }
      if (rows != 1) continue;
      // The padded keys' rows changed: the output stays what it was.
      std::vector<float> changed = kvs;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < Tk; ++j)
          if (keys[b * Tk + j] == 0.f)
            for (int64_t e = 0; e < D; ++e) changed[(b * Tk + j) * D + e] = 7.f + float(e);
      const std::vector<float> again =
          m.predict({xq, nn::Array::of<float>({B, Tk, D}, changed), mask}, B).at(0).values<float>();
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(again[i], got[i], 1e-6) << i;
    }
}

INSTANTIATE_TEST_SUITE_P(CpuAndReference, NnAttentionDevices,
                         ::testing::Values("CPU:0", "/device:REF:0"),
                         [](const auto& info) { return info.param == "CPU:0" ? "cpu" : "reference"; });

TEST(NnAttention, BadShapesAreClearErrors) {
  auto seq = nn::Input({4, 8});
  auto longer = nn::Input({6, 8});
  auto flat = nn::Input({8});
  auto [code, msg] = error_of([&] { nn::MultiHeadAttention(2, 4)(flat); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("(None, T, D) for the query"), std::string::npos) << msg;
  std::tie(code, msg) = error_of([&] { nn::MultiHeadAttention(2, 4)({seq, seq, longer}); });
  EXPECT_NE(msg.find("different lengths"), std::string::npos) << msg;
  nn::MultiHeadAttentionOptions causal;
  causal.use_causal_mask = true;
  std::tie(code, msg) = error_of([&] { nn::MultiHeadAttention(2, 4, causal)({longer, seq}); });
  EXPECT_NE(msg.find("at most as many queries as keys"), std::string::npos) << msg;
  EXPECT_EQ(error_of([&] { nn::MultiHeadAttention(0, 4); }).first, DLRT_INVALID_ARGUMENT);
  std::tie(code, msg) = error_of([&] { nn::TransformerBlock(3, 16)(seq); });
  EXPECT_NE(msg.find("divisible by num_heads = 3"), std::string::npos) << msg;
  auto ids = nn::Input({20});
  std::tie(code, msg) = error_of([&] { nn::TokenAndPositionEmbedding(256, 16, 8)(ids); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("at most 16 tokens (the position table's length); it has 20"),
            std::string::npos)
      << msg;
}

TEST(NnAttention, AttentionMaskOfTheWrongShapeNamesTheExpectedOne) {
  auto q = nn::Input({4, 8});
  auto kv = nn::Input({6, 8});
  for (const nn::Shape& bad : {nn::Shape{3, 6}, nn::Shape{4, 5}, nn::Shape{6}, nn::Shape{4, 6, 1}}) {
    auto mask = nn::Input(bad);
    auto [code, msg] = error_of([&] { nn::MultiHeadAttention(2, 4)({q, kv, kv, mask}); });
    EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << msg;
    EXPECT_NE(msg.find("attention_mask " + nn::shape_string(bad) + " does not fit"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("expected (None, 4, 6) (batch, queries, keys) or (None, 1, 6)"),
              std::string::npos)
        << msg;
  }
  auto ok = nn::Input({1, 6});
  auto [code, msg] = error_of([&] { nn::MultiHeadAttention(2, 4)({q, kv, kv, ok, ok}); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("called on 5 tensors"), std::string::npos) << msg;
}

namespace {

// The training step's gradient of a (causal) self-attention model: one SGD step of rate 1
// from `m`'s current weights, (before - after) per weight of the layer; the state (weights,
// optimizer slots, step count) is put back.
Weights sgd_gradient(nn::Model& m, const std::vector<nn::Array>& xs, const nn::Array& y) {
  const std::vector<nn::Model::NamedValue> before = m.state();
  m.train_on_batch(xs, {y});
  Weights g;
  for (const nn::Model::NamedValue& v : m.state()) {
    for (const nn::Model::NamedValue& b : before)
      if (b.name == v.name && b.name.rfind("multi_head_attention/", 0) == 0 &&
          b.name.find("/velocity") == std::string::npos) {  // SGD's slots left out
        std::vector<float>& d = g[v.name];
        for (size_t i = 0; i < v.values.size(); ++i) d.push_back(b.values[i] - v.values[i]);
      }
  }
  m.set_state(before);
  return g;
}

}  // namespace

// The masked (materialised) path's gradient: with a mask of ones it is the fused attention
// op's gradient (no mask); with a real mask (a query with every key masked among them) it
// matches central finite differences of evaluate's loss, and every weight stays finite.
TEST(NnAttention, AttentionMaskGradientMatchesUnmaskedAndFiniteDifferences) {
  dlrt::Context ctx = nn_test::cpu_context();
  const int64_t B = 2, T = 5, D = 6, H = 2, dh = 3;
  nn::MultiHeadAttentionOptions o;
  o.use_causal_mask = true;
  auto x_in = nn::Input({T, D});
  auto mask_in = nn::Input({T, T});
  nn::Model masked(ctx, {x_in, mask_in},
                   {nn::MultiHeadAttention(H, dh, o)({x_in, x_in, x_in, mask_in})});
  auto x2 = nn::Input({T, D});
  nn::Model plain(ctx, x2, nn::MultiHeadAttention(H, dh, o)(x2));
  masked.compile(nn::SGD(1.0), nn::MeanSquaredError(), {}, on("CPU:0", 3));
  plain.compile(nn::SGD(1.0), nn::MeanSquaredError(), {}, on("CPU:0", 3));
  plain.set_state(masked.state());
  const nn::Array x = noise({B, T, D}, 11), y = noise({B, T, D}, 12);
  const nn::Array ones = nn::Array::of<float>({B, T, T}, std::vector<float>(B * T * T, 1.f));
  const Weights g_ones = sgd_gradient(masked, {x, ones}, y);
  const Weights g_plain = sgd_gradient(plain, {x}, y);
  ASSERT_EQ(g_ones.size(), 8u);
  for (const auto& [name, g] : g_ones)
    for (size_t i = 0; i < g.size(); ++i)
      EXPECT_NEAR(g[i], g_plain.at(name)[i], 1e-5) << name << "[" << i << "]";

  std::vector<float> mv(B * T * T, 1.f);
  for (int64_t j = 0; j < T; ++j) mv[(T + 3) * T + j] = 0.f;  // sample 1, query 3: nothing
  for (int64_t i = 0; i < T; ++i) mv[i * T + 1] = 0.f;        // sample 0: key 1 is padding
  const nn::Array mask = nn::Array::of<float>({B, T, T}, mv);
  const Weights g = sgd_gradient(masked, {x, mask}, y);
  for (const auto& [name, v] : g)
    for (float e : v) ASSERT_TRUE(std::isfinite(e)) << name;
  const std::vector<nn::Model::NamedValue> w0 = masked.state();
  auto loss_at = [&](const std::string& name, size_t i, float delta) {
    std::vector<nn::Model::NamedValue> w = w0;
    for (nn::Model::NamedValue& v : w)
      if (v.name == name) v.values[i] += delta;
    masked.set_state(w);
    return masked.evaluate({x, mask}, {y}, B).at(0).second;
  };
  const double eps = 1e-2;
  int checked = 0;
  for (const char* name : {"query/kernel", "key/kernel", "value/kernel", "attention_output/bias",
                           "key/bias"})
    for (size_t i : {size_t(0), size_t(4), size_t(5)}) {
      const std::string full = std::string("multi_head_attention/") + name;
      const double fd = (loss_at(full, i, eps) - loss_at(full, i, -eps)) / (2 * eps);
      EXPECT_NEAR(g.at(full)[i], fd, 2e-3 + 2e-2 * std::abs(fd)) << full << "[" << i << "]";
      ++checked;
    }
  masked.set_state(w0);
  EXPECT_EQ(checked, 15);
}

TEST(NnAttention, TokenAndPositionEmbeddingAddsTheRowsOfBothTables) {
  dlrt::Context ctx = nn_test::cpu_context();
  auto ids = nn::Input({3});
  nn::Model m(ctx, ids, nn::TokenAndPositionEmbedding(10, 5, 2)(ids));
  m.compile(nn::SGD(0.1), nn::MeanSquaredError(), {}, on("CPU:0"));
  const std::vector<float> y =
      m.predict(nn::Array::of<int32_t>({2, 3}, {4, 0, 9, 1, 1, 1}), 2).values<float>();
  Weights w = weights_of(m);
  const auto& tok = w["token_and_position_embedding/token_embedding/embeddings"];
  const auto& pos = w["token_and_position_embedding/position_embedding/embeddings"];
  const int ids_v[] = {4, 0, 9, 1, 1, 1};
  for (int s = 0; s < 6; ++s)
    for (int e = 0; e < 2; ++e)
      EXPECT_FLOAT_EQ(y[s * 2 + e], tok[ids_v[s] * 2 + e] + pos[(s % 3) * 2 + e]);
}

TEST(NnAttention, TransformerBlockIsPreNormResidualAttentionThenMlp) {
  dlrt::Context ctx = nn_test::cpu_context();
  const int64_t B = 2, T = 4, D = 8, H = 2, F = 12;
  auto in = nn::Input({T, D});
  nn::Model m(ctx, in, nn::TransformerBlock(H, F)(in));
  m.compile(nn::SGD(0.1), nn::MeanSquaredError(), {}, on("CPU:0", 4));
  std::ostringstream summary;
  m.summary(summary);
  // 2 x LN (2D) + 4 projections (D*D + D) + MLP (D*F + F + F*D + D) = 32 + 288 + 212 = 532
  EXPECT_NE(summary.str().find("Total params: 532"), std::string::npos) << summary.str();
  const nn::Array x = noise({B, T, D}, 8);
  const std::vector<float> y = m.predict(x, B).values<float>();
  Weights w = weights_of(m);
  const std::vector<float> xs = x.values<float>();
  auto norm = [&](const std::vector<double>& v, const std::string& p) {
    std::vector<double> out(v.size());
    const auto& g = w[p + "/gamma"];
    const auto& b = w[p + "/beta"];
    for (int64_t t = 0; t < T; ++t) {
      double mean = 0, var = 0;
      for (int64_t i = 0; i < D; ++i) mean += v[t * D + i] / D;
      for (int64_t i = 0; i < D; ++i) var += (v[t * D + i] - mean) * (v[t * D + i] - mean) / D;
      for (int64_t i = 0; i < D; ++i)
        out[t * D + i] = (v[t * D + i] - mean) / std::sqrt(var + 1e-5) * g[i] + b[i];
    }
    return out;
  };
  const std::string p = "transformer_block";
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> x0 = to_double(xs, b * T * D, T * D);
    const auto a = norm(x0, p + "/ln_1");
    const auto att = mha_ref(a, a, T, T, D, D, H, D / H, true, w, p + "/attention");
    for (size_t i = 0; i < x0.size(); ++i) x0[i] += att[i];
    auto h = dense(norm(x0, p + "/ln_2"), T, D, w[p + "/mlp_in/kernel"], w[p + "/mlp_in/bias"], F);
    for (double& v : h) v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    const auto mlp = dense(h, T, F, w[p + "/mlp_out/kernel"], w[p + "/mlp_out/bias"], D);
    for (int64_t i = 0; i < T * D; ++i)
      EXPECT_NEAR(y[b * T * D + i], x0[i] + mlp[i], 1e-4) << "b " << b << " i " << i;
  }
}

TEST(NnAttention, EveryLayerIsCallableOnSymbolicTensorsAndInSequential) {
  dlrt::Context ctx = nn_test::cpu_context();
  nn::Sequential s(ctx, {nn::Input({6}), nn::TokenAndPositionEmbedding(20, 6, 8),
                         nn::TransformerBlock(2, 16), nn::MultiHeadAttention(2, 4),
                         nn::Dense(20)});
  s.compile(nn::Adam(1e-2), nn::SparseCategoricalCrossentropy(true), {}, on("CPU:0"));
  std::ostringstream summary;
  s.summary(summary);
  // Layer names (the type column is cut at Keras' width); 208 = 20*8 + 6*8 embeddings.
  for (const char* t : {"token_and_position_embedding (None, 6, 8)              208",
                        "transformer_block (Transform (None, 6, 8)",
                        "multi_head_attention (MultiH (None, 6, 8)              288"})
    EXPECT_NE(summary.str().find(t), std::string::npos) << t << "\n" << summary.str();
}

// The materialised path (attention dropout in the training step) trains, and with dropout
// the training loss still falls on a learnable sequence task: copy the token 2 back.
TEST(NnAttention, DropoutPathTrainsACausalCopyTask) {
  dlrt::Context ctx = nn_test::cpu_context();
  const int64_t T = 8, V = 6, N = 512;
  std::vector<int32_t> x(N * T), y(N * T);
  uint32_t s = 7;
  for (int64_t i = 0; i < N * T; ++i) {
    s = s * 1664525u + 1013904223u;
    x[i] = static_cast<int32_t>((s >> 16) % V);
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t t = 0; t < T; ++t) y[n * T + t] = t >= 2 ? x[n * T + t - 2] : 0;
  auto in = nn::Input({T});
  nn::TransformerBlockOptions o;
  o.dropout = 0.1;
  nn::SymbolicTensor h = nn::TokenAndPositionEmbedding(V, T, 32)(in);
  h = nn::TransformerBlock(4, 64, o)(h);
  nn::Model m(ctx, in, nn::Dense(V)(nn::LayerNormalization(-1, 1e-5)(h)));
  m.compile(nn::Adam(3e-3), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, on("CPU:0", 2));
  nn::FitOptions fo;
  fo.epochs = 8;
  fo.batch_size = 32;
  fo.progress.verbose = 0;
  const nn::Array xa = nn::Array::of<int32_t>({N, T}, x), ya = nn::Array::of<int32_t>({N, T}, y);
  const nn::History hist = m.fit(xa, ya, fo);
  EXPECT_LT(hist.history.at("loss").back(), 0.5 * hist.history.at("loss").front());
  // Positions >= 2 copy exactly once learnt: evaluate's accuracy counts all 8 positions, of
  // which the first 2 (target 0) are learnable too.
  EXPECT_GT(m.evaluate(xa, ya, 64).at(1).second, 0.9);
}
