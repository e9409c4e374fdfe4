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
                            int64_t embedding_dim);
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
  int64_t input_ids() const override;
  int64_t sequence_length() const { return length_; }

  Shape output_shape(const Shape& in) const override;
  std::vector<ParamSpec> params(const Shape&) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override;

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
                   const TransformerBlockOptions& o = {});
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
  int64_t num_heads() const { return heads_; }
  const TransformerBlockOptions& options() const { return o_; }

  Shape output_shape(const Shape& in) const override;
  std::vector<ParamSpec> params(const Shape& in) const override;

  // x (B, T, d); v: params() in order (ln_1 2, attention 8, ln_2 2, mlp 4).
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override;

  // The block's parts, configured as in this block (for decoders that reuse its weights).
  LayerNormalization norm() const { return LayerNormalization(-1, o_.layer_norm_epsilon); }
  MultiHeadAttention attention(int64_t key_dim) const;

 private:
  void check(const Shape& in) const;
  Value residual_dropout(CallContext& c, Value x, const std::string& which) const;

  int64_t heads_, inner_;
  TransformerBlockOptions o_;
  Activation act_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_TRANSFORMER_HPP_
