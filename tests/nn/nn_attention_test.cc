// nn_attention_test.cc: MultiHeadAttention, TransformerBlock and TokenAndPositionEmbedding
// (nn/attention.hpp, nn/transformer.hpp) against host-side loops over the layers' own weights
// (read back from the model), on the cpu plugin and the reference oracle; the shapes and
// errors a user meets; the dropout (materialised) path training; a tiny GPT learning text.
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
std::vector<double> mha_ref(const std::vector<double>& query, const std::vector<double>& kv,
                            int64_t tq, int64_t tk, int64_t dq, int64_t dkv, int64_t heads,
                            int64_t dh, bool causal, Weights& w, const std::string& p) {
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
