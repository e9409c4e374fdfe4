// samples/char_transformer/kv_decoder.hpp: text generation from a trained gpt() model with a
// key/value cache — each new token costs one step over one position, not a re-run of the
// whole window.
//
// The step graph is built once from the model's trained weights (copied in as constants, so
// training may go on and the decoder keeps what it was given):
//   x = token_embedding[id] + position_embedding[p]                         (1, 1, d)
//   per block: a = LN1(x); q, k, v = a Wq + bq, ...  each (1, H, 1, dh)
//              keys = concat(k_cache (1, H, C, dh), k) along the time axis  (1, H, C+1, dh)
//              s = q keys^T / sqrt(dh) + mask; o = softmax(s) values        (1, H, 1, dh)
//              x = x + o Wo + bo;  x = x + MLP(LN2(x))
//   logits = LN(x) Wh + bh                                                  (1, 256)
// C = the model's context. The mask (fed) is 0 for the p cached positions and the new one,
// -inf for the cache's unused slots, so the step sees exactly the tokens so far. The step
// returns each block's k and v, which the decoder writes into its host-side cache at slot p.
//
// Windows: the model was trained on windows of C tokens with absolute positions 0..C-1, so a
// context holds at most C tokens. When it is full the decoder keeps the last C/2 tokens and
// rebuilds the cache from them at positions 0..C/2-1 (C/2 steps, once every C/2 tokens): the
// same windows `full_rerun_next` uses, so both paths see the same tokens at the same
// positions and produce the same logits up to rounding.
#pragma once

#include <dlrt/dlrt.hpp>
#include <dlrt/nn.hpp>
#include <dlrt/nn/runner.hpp>  // nn::detail::Runner

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models.hpp"

namespace char_transformer {

// The token window a model of context C sees after `history` tokens under the decoder's rule
// (full -> keep the last C/2): returns the start of the window within the history. Pure
// arithmetic, shared by the cache and the full re-run.
inline size_t window_start(size_t history, int64_t context) {
  const size_t c = static_cast<size_t>(context), keep = c / 2 > 0 ? c / 2 : 1;
  if (history <= c) return 0;
  // Windows start at 0, then every time the window would exceed C it restarts C - keep
  // tokens later: starts 0, C - keep, 2 (C - keep), ... ; the window of `history` tokens is
  // the last start s with history - s <= C.
  const size_t stride = c - keep;
  return ((history - c + stride - 1) / stride) * stride;
}

class KvCacheDecoder {
 public:
  // `model` must be a gpt() model (its layers are found by type, in order). `device` as the
  // samples' --device: a spec or "auto".
  KvCacheDecoder(const dlrt::Context& ctx, dlrt::nn::Model& model, const std::string& device)
      : ctx_(ctx), graph_(ctx) {
    namespace nn = dlrt::nn;
    std::map<std::string, nn::Model::NamedValue> weights;
    for (nn::Model::NamedValue& v : model.state()) weights[v.name] = std::move(v);
    auto weight = [&](const std::string& name) {
      auto it = weights.find(name);
      if (it == weights.end())
        throw dlrt::Error(DLRT_INVALID_ARGUMENT,
                          "KvCacheDecoder: the model has no weight '" + name +
                              "'; expected a model built by char_transformer::gpt()");
      return graph_.constant<float>("", it->second.dims, it->second.values);
    };
    const nn::TokenAndPositionEmbedding* embed = nullptr;
    std::vector<const nn::TransformerBlock*> blocks;
    std::vector<std::string> block_names;
    const nn::LayerNormalization* final_norm = nullptr;
    const nn::Dense* head = nullptr;
    for (const auto& l : model.layers()) {
      if (auto* e = dynamic_cast<const nn::TokenAndPositionEmbedding*>(l.get())) embed = e;
      if (auto* b = dynamic_cast<const nn::TransformerBlock*>(l.get())) {
        blocks.push_back(b);
        block_names.push_back(b->name());
      }
      if (auto* n = dynamic_cast<const nn::LayerNormalization*>(l.get())) final_norm = n;
      if (auto* d = dynamic_cast<const nn::Dense*>(l.get())) head = d;
    }
    if (!embed || blocks.empty() || !final_norm || !head)
      throw dlrt::Error(DLRT_INVALID_ARGUMENT,
                        "KvCacheDecoder: expected a char_transformer::gpt() model "
                        "(TokenAndPositionEmbedding, TransformerBlocks, LayerNormalization, "
                        "Dense)");
    context_ = embed->sequence_length();
    const std::string e = embed->name();
    const dlrt::Value tok = weight(e + "/token_embedding/embeddings");
    const dlrt::Value pos = weight(e + "/position_embedding/embeddings");
    const int64_t d = tok.dims()[1];
    heads_ = blocks[0]->num_heads();
    head_dim_ = d / heads_;

    dlrt::Graph& g = graph_;
    std::unique_ptr<dlrt::DeviceScope> scope;
    if (device != "auto") scope = std::make_unique<dlrt::DeviceScope>(g, device);
    id_ = g.placeholder("id", DLRT_I32, {1, 1});
    position_ = g.placeholder("position", DLRT_I32, {1});
    mask_ = g.placeholder("mask", DLRT_F32, {1, 1, 1, context_ + 1});
    dlrt::Value x = g.op1("add", {g.op1("gather", {tok, id_}), g.op1("gather", {pos, position_})});
    std::vector<dlrt::Value> outputs;
    const dlrt::Value scale =
        g.constant<float>("", {}, {1.0f / std::sqrt(static_cast<float>(head_dim_))});
    for (size_t l = 0; l < blocks.size(); ++l) {
      const std::string b = block_names[l];
      const double eps = blocks[l]->options().layer_norm_epsilon;
      auto norm = [&](dlrt::Value in, const std::string& which) {
        return g.op("layer_norm",
                    {in, weight(b + "/" + which + "/gamma"), weight(b + "/" + which + "/beta")},
                    {{"epsilon", eps}})[0];
      };
      auto proj = [&](dlrt::Value in, const std::string& which) {
        return nn::detail::project(g, in, weight(b + "/" + which + "/kernel"),
                                   weight(b + "/" + which + "/bias"), "");
      };
      const dlrt::Value a = norm(x, "ln_1");
      const dlrt::Value q = nn::detail::split_heads(g, proj(a, "attention/query"), heads_);
      const dlrt::Value k = nn::detail::split_heads(g, proj(a, "attention/key"), heads_);
      const dlrt::Value v = nn::detail::split_heads(g, proj(a, "attention/value"), heads_);
      const std::vector<int64_t> cache_dims = {1, heads_, context_, head_dim_};
      k_cache_.push_back(g.placeholder("k_cache_" + std::to_string(l), DLRT_F32, cache_dims));
      v_cache_.push_back(g.placeholder("v_cache_" + std::to_string(l), DLRT_F32, cache_dims));
      const dlrt::Value keys = g.op1("concat", {k_cache_[l], k}, {{"axis", int64_t(2)}});
      const dlrt::Value values = g.op1("concat", {v_cache_[l], v}, {{"axis", int64_t(2)}});
      dlrt::Value s = g.op1("batch_matmul", {q, keys}, {{"transpose_b", true}});
      s = g.op1("add", {g.op1("mul", {s, scale}), mask_});
      const dlrt::Value o = g.op1("batch_matmul", {g.op1("softmax", {s}), values});
      x = g.op1("add", {x, proj(nn::detail::merge_heads(g, o), "attention/attention_output")});
      dlrt::Value h = proj(norm(x, "ln_2"), "mlp_in");
      nn::CallContext inference{g, /*training=*/false, /*seed=*/0, /*scope=*/""};
      h = nn::Activation(blocks[l]->options().activation).call(inference, h, {});
      x = g.op1("add", {x, proj(h, "mlp_out")});
      outputs.push_back(k);
      outputs.push_back(v);
    }
    x = g.op("layer_norm",
             {x, weight(final_norm->name() + "/gamma"), weight(final_norm->name() + "/beta")},
             {{"epsilon", final_norm->epsilon()}})[0];
    const dlrt::Value logits = nn::detail::project(g, x, weight(head->name() + "/kernel"),
                                                   weight(head->name() + "/bias"), "");
    outputs.insert(outputs.begin(),
                   g.op1("reshape", {logits}, {{"shape", std::vector<int64_t>{1, kVocabulary}}}));

    std::vector<dlrt::Value> feeds = {id_, position_, mask_};
    std::vector<std::string> names = {"id", "position", "mask"};
    for (size_t l = 0; l < blocks.size(); ++l) {
      feeds.push_back(k_cache_[l]);
      feeds.push_back(v_cache_[l]);
      names.push_back("k_cache_" + std::to_string(l));
      names.push_back("v_cache_" + std::to_string(l));
    }
    dlrt::CompileOptions options;
    if (device == "auto") options.auto_device = true;
    runner_ = std::make_unique<nn::detail::Runner>(ctx_, g, feeds, names, outputs, options);
    const size_t cache = static_cast<size_t>(heads_ * context_ * head_dim_);
    k_host_.assign(blocks.size(), std::vector<float>(cache, 0.f));
    v_host_.assign(blocks.size(), std::vector<float>(cache, 0.f));
  }

  int64_t context() const { return context_; }

  // Appends `id` to the history and returns the logits (256) for the next token.
  std::vector<float> push(int32_t id) {
    if (id < 0 || id >= kVocabulary)
      throw dlrt::Error(DLRT_INVALID_ARGUMENT, "KvCacheDecoder: token id " + std::to_string(id) +
                                                   " is not a byte (expected 0..255)");
    history_.push_back(id);
    const size_t start = window_start(history_.size(), context_);
    if (start != start_) {  // the window moved: rebuild the cache from its tokens
      start_ = start;
      filled_ = 0;
      std::vector<float> logits;
      for (size_t i = start_; i < history_.size(); ++i) logits = step(history_[i]);
      return logits;
    }
    return step(id);
  }

  // Forgets the history (a new prompt).
  void reset() {
    history_.clear();
    start_ = 0;
    filled_ = 0;
  }

 private:
  // Runs token `id` at position filled_ and writes its k/v into the cache.
  std::vector<float> step(int32_t id) {
    std::vector<dlrt::Tensor>& in = runner_->feeds;
    const int64_t p = filled_;
    in[0].write(std::vector<int32_t>{id});
    in[1].write(std::vector<int32_t>{static_cast<int32_t>(p)});
    std::vector<float> mask(static_cast<size_t>(context_ + 1),
                            -std::numeric_limits<float>::infinity());
    for (int64_t j = 0; j < p; ++j) mask[static_cast<size_t>(j)] = 0.f;
    mask.back() = 0.f;  // the new token itself
    in[2].write(mask);
    for (size_t l = 0; l < k_host_.size(); ++l) {
      in[3 + 2 * l].write(k_host_[l]);
      in[4 + 2 * l].write(v_host_[l]);
    }
    runner_->run();
    const std::vector<dlrt::Tensor>& out = runner_->fetches;
    for (size_t l = 0; l < k_host_.size(); ++l) {  // new (1, H, 1, dh) -> slot p of (H, C, dh)
      const std::vector<float> k = out[1 + 2 * l].read<float>(), v = out[2 + 2 * l].read<float>();
      for (int64_t h = 0; h < heads_; ++h)
        for (int64_t i = 0; i < head_dim_; ++i) {
          const size_t at = static_cast<size_t>((h * context_ + p) * head_dim_ + i);
          k_host_[l][at] = k[static_cast<size_t>(h * head_dim_ + i)];
          v_host_[l][at] = v[static_cast<size_t>(h * head_dim_ + i)];
        }
    }
    ++filled_;
    return out[0].read<float>();
  }

  const dlrt::Context& ctx_;
  dlrt::Graph graph_;
  dlrt::Value id_, position_, mask_;
  std::vector<dlrt::Value> k_cache_, v_cache_;
  std::unique_ptr<dlrt::nn::detail::Runner> runner_;
  int64_t context_ = 0, heads_ = 1, head_dim_ = 1;
  std::vector<std::vector<float>> k_host_, v_host_;  // per block (H, C, dh)
  std::vector<int32_t> history_;
  size_t start_ = 0;    // the window's first token in history_
  int64_t filled_ = 0;  // cache slots in use
};

// The same next-token logits without a cache: the whole current window through the trained
// model (predict on (1, C) ids, the window left-aligned and padded with zeros, which the
// causal mask keeps from mattering) — C times the work per token; the test's oracle.
inline std::vector<float> full_rerun_next(dlrt::nn::Model& model,
                                          const std::vector<int32_t>& history, int64_t context) {
  const size_t start = window_start(history.size(), context);
  std::vector<int32_t> window(static_cast<size_t>(context), 0);
  for (size_t i = start; i < history.size(); ++i) window[i - start] = history[i];
  const dlrt::nn::Array p = model.predict(dlrt::nn::Array::of<int32_t>({1, context}, window), 1);
  const std::vector<float> all = p.values<float>();
  const size_t last = history.size() - start - 1;
  return std::vector<float>(all.begin() + static_cast<std::ptrdiff_t>(last * kVocabulary),
                            all.begin() + static_cast<std::ptrdiff_t>((last + 1) * kVocabulary));
}

}  // namespace char_transformer
