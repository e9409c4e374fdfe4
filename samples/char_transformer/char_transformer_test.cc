// char_transformer_test.cc: generation with the key/value cache (kv_decoder.hpp) against the
// whole-window re-run through the trained model's predict — the same logits at every step,
// across window moves, and so the same bytes — plus the window rule and the seeded sampling.
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "char_transformer/generate.hpp"
#include "char_transformer/kv_decoder.hpp"
#include "char_transformer/models.hpp"

namespace nn = dlrt::nn;
namespace ct = char_transformer;

namespace {

dlrt::Context cpu_context() {
  dlrt::ContextOptions o;
  o.plugin_options("cpu:threads=1");
  return dlrt::Context(o);
}

// A small gpt() trained a few steps on a repetitive text, so its logits are far from uniform.
struct SmallGpt {
  dlrt::Context ctx = cpu_context();
  ct::ModelConfig cfg;
  std::unique_ptr<nn::Model> model;
  SmallGpt() {
    cfg.context = 16;
    cfg.d_model = 32;
    cfg.heads = 2;
    cfg.layers = 2;
    nn::Input in({cfg.context});
    model = std::make_unique<nn::Model>(ctx, in, ct::gpt(in, cfg), "gpt");
    nn::CompileConfig c;
    c.device = "CPU:0";
    c.seed = 3;
    model->compile(nn::Adam(3e-3), nn::SparseCategoricalCrossentropy(true), {}, c);
    std::string text;
    for (int i = 0; i < 200; ++i) text += "the cat sat on the mat. ";
    const nn::TextWindows w = nn::TextCorpus::from_string(text).windows(cfg.context, 1024, 1);
    nn::FitOptions fo;
    fo.epochs = 3;
    fo.batch_size = 32;
    fo.progress.verbose = 0;
    model->fit(w.x, w.y, fo);
  }
};

}  // namespace

TEST(CharTransformerWindow, StartsMoveByHalfTheContextOnceFull) {
  EXPECT_EQ(ct::window_start(1, 8), 0u);
  EXPECT_EQ(ct::window_start(8, 8), 0u);   // full, still from 0
  EXPECT_EQ(ct::window_start(9, 8), 4u);   // the last 4 tokens + the new one
  EXPECT_EQ(ct::window_start(12, 8), 4u);  // 8 tokens again
  EXPECT_EQ(ct::window_start(13, 8), 8u);
  for (size_t h = 1; h < 200; ++h) {
    const size_t s = ct::window_start(h, 8);
    EXPECT_LE(h - s, 8u) << h;
    EXPECT_GT(h - s, 4u - (h <= 4 ? 4u : 0u)) << h;
  }
}

TEST(CharTransformerKvCache, LogitsMatchTheFullRerunAcrossWindowMoves) {
  SmallGpt g;
  ct::KvCacheDecoder decoder(g.ctx, *g.model, "CPU:0");
  EXPECT_EQ(decoder.context(), 16);
  std::vector<int32_t> history;
  const std::string text = "the cat sat on the mat. the cat sat on the mat. the";  // 51 bytes
  double worst = 0;
  for (unsigned char ch : text) {
    history.push_back(ch);
    const std::vector<float> cached = decoder.push(ch);
    const std::vector<float> full = ct::full_rerun_next(*g.model, history, g.cfg.context);
    ASSERT_EQ(cached.size(), 256u);
    ASSERT_EQ(full.size(), 256u);
    for (size_t i = 0; i < 256; ++i) worst = std::max(worst, double(std::fabs(cached[i] - full[i])));
  }
  EXPECT_LT(worst, 2e-4) << "largest logit difference between the cache and the re-run";
}

TEST(CharTransformerKvCache, GeneratesTheSameBytesAsTheFullRerun) {
  SmallGpt g;
  for (double temperature : {0.0, 1.0}) {
    const std::string a = ct::generate_cached(g.ctx, *g.model, "CPU:0", "the ", 40, temperature, 7);
    const std::string b =
        ct::generate_full_rerun(g.ctx, *g.model, "CPU:0", g.cfg.context, "the ", 40, temperature, 7);
    EXPECT_EQ(a, b) << "temperature " << temperature;
    EXPECT_EQ(a.size(), 40u);
  }
  // The model learnt the text: greedy decoding continues it.
  const std::string greedy = ct::generate_cached(g.ctx, *g.model, "CPU:0", "the cat", 8, 0.0, 1);
  EXPECT_EQ(greedy, " sat on ") << greedy;
}

TEST(CharTransformerSampling, ASeedRepeatsItsTextAndAnotherSeedDiffers) {
  SmallGpt g;
  const std::string a = ct::generate_cached(g.ctx, *g.model, "CPU:0", "x", 60, 2.0, 11);
  const std::string b = ct::generate_cached(g.ctx, *g.model, "CPU:0", "x", 60, 2.0, 11);
  const std::string c = ct::generate_cached(g.ctx, *g.model, "CPU:0", "x", 60, 2.0, 12);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(CharTransformerKvCache, BadInputIsAClearError) {
  SmallGpt g;
  ct::KvCacheDecoder decoder(g.ctx, *g.model, "CPU:0");
  try {
    decoder.push(256);
    FAIL() << "no error for id 256";
  } catch (const dlrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("token id 256 is not a byte"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ct::generate_cached(g.ctx, *g.model, "CPU:0", "", 5, 1.0, 1), dlrt::Error);
  // A model that is not a gpt(): refused by name.
  nn::Sequential other(g.ctx, {nn::Input({4}), nn::Dense(2)});
  other.compile(nn::Adam(), nn::MeanSquaredError());
  EXPECT_THROW(ct::KvCacheDecoder(g.ctx, other, "CPU:0"), dlrt::Error);
}

// ---- the PyTorch twin (tools/dlbench/torch_char_transformer.py) ---------------------------

// testdata/twin_step/ holds what `torch_char_transformer.py --dump-step` wrote for a small
// configuration (testdata/twin_step/README has the command): torch's initial weights, one
// batch, torch's gradients on it and its loss. With those weights, dlrt's gpt() must give the
// same loss and the same gradients within 1e-4 relative. The gradients are read back through
// one SGD step of rate 1000 (new = old - 1000 g, so g = (old - new) / 1000; the large rate
// keeps the subtraction's rounding far below the tolerance).
TEST(CharTransformerTwin, OneStepLossAndGradientsMatchPyTorch) {
  const std::string dir = std::string(CHAR_TRANSFORMER_TESTDATA) + "/twin_step";
  const dlrt::SafeTensors weights = dlrt::SafeTensors::open(dir + "/weights.safetensors");
  const dlrt::SafeTensors grads = dlrt::SafeTensors::open(dir + "/grads.safetensors");
  const dlrt::SafeTensors batch = dlrt::SafeTensors::open(dir + "/batch.safetensors");
  std::ifstream loss_file(dir + "/loss.txt");
  double torch_loss = 0;
  ASSERT_TRUE(loss_file >> torch_loss) << dir << "/loss.txt";

  const dlrt::SafeTensorView xv = batch.at("x"), yv = batch.at("y");
  ASSERT_EQ(xv.dims.size(), 2u);
  const int64_t B = xv.dims[0], T = xv.dims[1];
  ct::ModelConfig cfg;
  cfg.context = T;
  cfg.d_model = weights.at("tok_emb").dims[1];
  cfg.layers = 0;
  while (weights.find("block" + std::to_string(cfg.layers) + "/wq/kernel")) ++cfg.layers;
  cfg.heads = 2;  // the README's command
  dlrt::Context ctx = cpu_context();
  nn::Input in({T});
  nn::Model m(ctx, in, ct::gpt(in, cfg), "gpt");
  nn::CompileConfig c;
  c.device = "CPU:0";
  m.compile(nn::SGD(1000.0), nn::SparseCategoricalCrossentropy(true), {}, c);

  // torch's names -> dlrt's (models.hpp's layers, named by the functional model).
  auto dlrt_name = [&](const std::string& t) -> std::string {
    if (t == "tok_emb") return "token_and_position_embedding/token_embedding/embeddings";
    if (t == "pos_emb") return "token_and_position_embedding/position_embedding/embeddings";
    if (t.rfind("ln_f/", 0) == 0) return "layer_normalization/" + t.substr(5);
    if (t.rfind("head/", 0) == 0) return "dense/" + t.substr(5);
    const size_t slash = t.find('/');
    const int i = std::stoi(t.substr(5, slash - 5));
    const std::string block = i == 0 ? "transformer_block" : "transformer_block_" + std::to_string(i);
    const size_t slash2 = t.find('/', slash + 1);
    const std::string part = t.substr(slash + 1, slash2 - slash - 1), rest = t.substr(slash2);
    const std::map<std::string, std::string> parts = {
        {"ln1", "ln_1"}, {"ln2", "ln_2"}, {"wq", "attention/query"}, {"wk", "attention/key"},
        {"wv", "attention/value"}, {"wo", "attention/attention_output"}, {"w1", "mlp_in"},
        {"w2", "mlp_out"}};
    return block + "/" + parts.at(part) + rest;
  };
  std::vector<nn::Model::NamedValue> start;
  std::map<std::string, std::string> torch_of;
  for (const dlrt::SafeTensorView& w : weights.entries()) {
    ASSERT_EQ(w.dtype, DLRT_F32) << w.name;
    const float* p = static_cast<const float*>(w.data);
    start.push_back({dlrt_name(w.name), w.dims, std::vector<float>(p, p + w.bytes / 4)});
    torch_of[start.back().name] = w.name;
  }
  m.set_state(start);

  auto ids = [&](const dlrt::SafeTensorView& v) {
    const int64_t* p = static_cast<const int64_t*>(v.data);
    return nn::Array::of<int64_t>({B, T}, std::vector<int64_t>(p, p + B * T));
  };
  nn::FitOptions fo;
  fo.epochs = 1;
  fo.batch_size = B;
  fo.shuffle = false;
  fo.progress.verbose = 0;
  const nn::History h = m.fit(ids(xv), ids(yv), fo);
  EXPECT_NEAR(h.last("loss"), torch_loss, 1e-4 * torch_loss);

  size_t compared = 0;
  for (const nn::Model::NamedValue& after : m.state()) {
    auto it = torch_of.find(after.name);
    if (it == torch_of.end()) continue;  // optimizer state
    const dlrt::SafeTensorView g = grads.at(it->second);
    const float* tg = static_cast<const float*>(g.data);
    const nn::Model::NamedValue* before = nullptr;
    for (const auto& s : start)
      if (s.name == after.name) before = &s;
    ASSERT_NE(before, nullptr);
    double diff = 0, norm = 0;
    for (size_t i = 0; i < after.values.size(); ++i) {
      const double mine = (double(before->values[i]) - double(after.values[i])) / 1000.0;
      diff += (mine - tg[i]) * (mine - tg[i]);
      norm += double(tg[i]) * tg[i];
    }
    // 1e-4 relative; the absolute 1e-7 is for the key biases, whose true gradient is 0
    // (softmax ignores a constant added to a row of scores): both sides give rounding, ~1e-9.
    EXPECT_LE(std::sqrt(diff), 1e-4 * std::sqrt(norm) + 1e-7) << after.name;
    ++compared;
  }
  EXPECT_EQ(compared, weights.size());
}
