// dlrt/nn/transformer.hpp: the pieces of a GPT-style model — TokenAndPositionEmbedding and a
// pre-norm TransformerBlock (KerasNLP's names and defaults where it has them).
//
//   auto in = nn::Input({128});                                   // (None, T) byte ids
//   auto x = nn::TokenAndPositionEmbedding(256, 128, 128)(in);    // (None, T, d)
//   for (int i = 0; i < 4; ++i) x = nn::TransformerBlock(4, 512)(x);
//   auto logits = nn::Dense(256)(nn::LayerNormalization(-1, 1e-5)(x));
//
// TokenAndPositionEmbedding(vocabulary_size V, sequence_length L, embedding_dim d):
//   ids (T) i32/i64, T <= L  ->  token_embedding[ids] + position_embedding[0..T)   (T, d)
//   Parameters token_embedding/embeddings (V, d) and position_embedding/embeddings (L, d),
//   both Keras' "uniform" U(-0.05, 0.05) (KerasNLP's position default is Glorot; the uniform
//   one keeps the two tables alike). A sequence longer than L is INVALID_ARGUMENT naming both
//   lengths when the model is built; an id outside [0, V) is refused on the host as for
//   Embedding. Ops: gather, slice of the position table, add (broadcast over the batch).
//
// TransformerBlock(num_heads, intermediate_dim, options), pre-norm (GPT-2's order):
//   x = x + dropout(MHA(LN1(x)))           causal self-attention, key_dim = d / num_heads
//   x = x + dropout(W2 act(W1 LN2(x) + b1) + b2)        W1 (d, intermediate), W2 (intermediate, d)
//   LayerNorm epsilon 1e-5 (PyTorch's and KerasNLP's), activation "gelu" (exact, erf form).
//   Parameters: ln_1/{gamma,beta}, the MultiHeadAttention's under attention/, ln_2/{gamma,beta},
//   mlp_in/{kernel,bias}, mlp_out/{kernel,bias}. Input (T, d) -> (T, d); d must divide by
//   num_heads. dropout (0 by default) drops the two residual branches and the attention
//   probabilities in the training step.
#ifndef DLRT_NN_TRANSFORMER_HPP_
#define DLRT_NN_TRANSFORMER_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/activations.hpp"
#include "dlrt/nn/attention.hpp"
#include "dlrt/nn/layer_norm.hpp"
#include "dlrt/nn/layers.hpp"

namespace dlrt::nn {

class TokenAndPositionEmbedding : public Layer {
 public:
  TokenAndPositionEmbedding(int64_t vocabulary_size, int64_t sequence_length,
                            int64_t embedding_dim)
      : vocab_(vocabulary_size), length_(sequence_length), dim_(embedding_dim) {
    if (vocabulary_size < 1 || sequence_length < 1 || embedding_dim < 1)
      throw Error(DLRT_INVALID_ARGUMENT,
                  "TokenAndPositionEmbedding: vocabulary_size, sequence_length and "
                  "embedding_dim must be >= 1");
  }
  std::shared_ptr<Layer> clone() const override {
    return std::make_shared<TokenAndPositionEmbedding>(*this);
  }
  std::string type() const override { return "TokenAndPositionEmbedding"; }
  std::string base_name() const override { return "token_and_position_embedding"; }
  int64_t input_ids() const override { return vocab_; }
  int64_t sequence_length() const { return length_; }

  Shape output_shape(const Shape& in) const override {
    if (in.size() != 1) throw bad_input(in, "(None, T) token ids");
    if (in[0] > length_)
      throw bad_input(in, "a sequence of at most " + std::to_string(length_) +
                              " tokens (the position table's length); it has " +
                              std::to_string(in[0]));
    return {in[0], dim_};
  }
  std::vector<ParamSpec> params(const Shape&) const override {
    const Initializer u = Initializer::random_uniform(-0.05, 0.05);
    return {{"token_embedding/embeddings", {vocab_, dim_}, u, true},
            {"position_embedding/embeddings", {length_, dim_}, u, true}};
  }
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override {
    if (x.dtype() != DLRT_I32 && x.dtype() != DLRT_I64)
      throw Error(DLRT_INVALID_ARGUMENT, display_name() +
                                             " (TokenAndPositionEmbedding): takes integer ids "
                                             "(i32 or i64), got " + dtype_name(x.dtype()));
    const int64_t t = x.dims().at(1);
    Value tok = c.graph.op1("gather", {v[0], x}, {}, c.node(name_) + "/token");
    Value pos = t == length_ ? v[1]
                             : c.graph.op1("slice", {v[1]},
                                           {{"begin", std::vector<int64_t>{0}},
                                            {"end", std::vector<int64_t>{t}},
                                            {"axes", std::vector<int64_t>{0}}});
    return c.graph.op1("add", {tok, pos}, {}, c.node(name_));
  }

 private:
  int64_t vocab_, length_, dim_;
};

struct TransformerBlockOptions {
  double dropout = 0.0;
  std::string activation = "gelu";  // Activation() names: gelu, relu, silu, ...
  double layer_norm_epsilon = 1e-5;
  bool use_causal_mask = true;  // a decoder block (GPT); false for an encoder block
};

class TransformerBlock : public Layer {
 public:
  TransformerBlock(int64_t num_heads, int64_t intermediate_dim,
                   const TransformerBlockOptions& o = {})
      : heads_(num_heads), inner_(intermediate_dim), o_(o), act_(o.activation) {
    if (num_heads < 1 || intermediate_dim < 1)
      throw Error(DLRT_INVALID_ARGUMENT,
                  "TransformerBlock: num_heads and intermediate_dim must be >= 1");
    if (!(o.dropout >= 0.0 && o.dropout < 1.0))
      throw Error(DLRT_INVALID_ARGUMENT, "TransformerBlock: dropout must be in [0, 1)");
  }
  std::shared_ptr<Layer> clone() const override { return std::make_shared<TransformerBlock>(*this); }
  std::string type() const override { return "TransformerBlock"; }
  std::string base_name() const override { return "transformer_block"; }
  int64_t num_heads() const { return heads_; }
  const TransformerBlockOptions& options() const { return o_; }

  Shape output_shape(const Shape& in) const override {
    check(in);
    return in;
  }
  std::vector<ParamSpec> params(const Shape& in) const override {
    check(in);
    const int64_t d = in[1];
    std::vector<ParamSpec> p;
    auto add = [&](const std::string& prefix, const std::vector<ParamSpec>& sub) {
      for (const ParamSpec& s : sub)
        p.emplace_back(prefix + "/" + s.name, s.dims, s.init, s.trainable, s.regularizer);
    };
    add("ln_1", norm().params(in));
    add("attention", attention(d / heads_).params(in));
    add("ln_2", norm().params(in));
    const Initializer w = Initializer::glorot_uniform(), z = Initializer::zeros();
    p.push_back({"mlp_in/kernel", {d, inner_}, w, true});
    p.push_back({"mlp_in/bias", {inner_}, z, true});
    p.push_back({"mlp_out/kernel", {inner_, d}, w, true});
    p.push_back({"mlp_out/bias", {d}, z, true});
    return p;
  }

  // x (B, T, d); v: params() in order (ln_1 2, attention 8, ln_2 2, mlp 4).
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override {
    Graph& g = c.graph;
    const std::string n = c.node(name_);
    LayerNormalization ln1 = norm(), ln2 = norm();
    ln1.set_name(name_ + "/ln_1");
    ln2.set_name(name_ + "/ln_2");
    MultiHeadAttention mha = attention(x.dims().back() / heads_);
    mha.set_name(name_ + "/attention");
    auto part = [&](size_t from, size_t count) {
      return std::vector<Value>(v.begin() + from, v.begin() + from + count);
    };
    Value a = mha.call(c, ln1.call(c, x, part(0, 2)), part(2, 8));
    x = g.op1("add", {x, residual_dropout(c, a, "attention")}, {}, n + "/residual_1");
    Value h = ln2.call(c, x, part(10, 2));
    h = detail::project(g, h, v[12], v[13], n + "/mlp_in");
    Activation act = act_;
    act.set_name(name_ + "/mlp_activation");
    h = act.call(c, h, {});
    h = detail::project(g, h, v[14], v[15], n + "/mlp_out");
    return g.op1("add", {x, residual_dropout(c, h, "mlp")}, {}, n);
  }

  // The block's parts, configured as in this block (for decoders that reuse its weights).
  LayerNormalization norm() const { return LayerNormalization(-1, o_.layer_norm_epsilon); }
  MultiHeadAttention attention(int64_t key_dim) const {
    MultiHeadAttentionOptions m;
    m.dropout = o_.dropout;
    m.use_causal_mask = o_.use_causal_mask;
    return MultiHeadAttention(heads_, key_dim, m);
  }

 private:
  void check(const Shape& in) const {
    if (in.size() != 2) throw bad_input(in, "(None, T, d)");
    if (in[1] % heads_ != 0)
      throw bad_input(in, "a model width d divisible by num_heads = " + std::to_string(heads_));
    act_.output_shape(in);  // refuses an activation whose op this runtime lacks
  }
  Value residual_dropout(CallContext& c, Value x, const std::string& which) const {
    if (!c.training || o_.dropout == 0.0) return x;
    return c.graph.op1("dropout", {x},
                       {{"rate", o_.dropout},
                        {"seed", static_cast<int64_t>(derive_seed(c.seed, name_ + "/" + which))}},
                       c.node(name_) + "/" + which + "_dropout");
  }

  int64_t heads_, inner_;
  TransformerBlockOptions o_;
  Activation act_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_TRANSFORMER_HPP_
