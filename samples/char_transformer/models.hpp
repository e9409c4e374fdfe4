// samples/char_transformer/models.hpp: the two byte-level language models of the sample, as
// functions of a symbolic input (used by the sample and by `dlbench train --model
// char_transformer`, so both train the same network).
//
// gpt: GPT-2's layout at a small size (Radford et al. 2019; Karpathy's nanoGPT "shakespeare
// char" is the same shape):
//   ids (T) -> TokenAndPositionEmbedding(256, T, d) -> L x TransformerBlock(h heads, 4d MLP,
//   GELU, pre-norm, causal) -> LayerNormalization(eps 1e-5) -> Dense(256) logits (T, 256)
// The defaults (L = 4, h = 4, d = 128, T = 128) have 875,520 parameters. tools/dlbench's
// torch_char_transformer.py is the same network in PyTorch.
// lstm: ids (T) -> Embedding(256, d) -> LSTM(d, sequences) x L -> Dense(256) logits (T, 256).
#pragma once

#include <dlrt/nn.hpp>

#include <cstdint>

namespace char_transformer {

struct ModelConfig {
  int64_t context = 128;  // T, the training window and the position table's length
  int64_t d_model = 128;
  int64_t heads = 4;
  int64_t layers = 4;
  double dropout = 0.0;
};

inline constexpr int64_t kVocabulary = 256;  // bytes

inline dlrt::nn::SymbolicTensor gpt(const dlrt::nn::SymbolicTensor& ids, const ModelConfig& c) {
  namespace nn = dlrt::nn;
  nn::SymbolicTensor x = nn::TokenAndPositionEmbedding(kVocabulary, c.context, c.d_model)(ids);
  nn::TransformerBlockOptions o;
  o.dropout = c.dropout;
  for (int64_t i = 0; i < c.layers; ++i) x = nn::TransformerBlock(c.heads, 4 * c.d_model, o)(x);
  x = nn::LayerNormalization(-1, 1e-5)(x);
  return nn::Dense(kVocabulary)(x);
}

// The LSTM of --model lstm: Embedding(256, d) -> `layers` x LSTM(d, return_sequences) ->
// Dense(256); with the defaults (d 128, 4 layers) 592,128 parameters, with --layers 2 328,960.
inline dlrt::nn::SymbolicTensor lstm(const dlrt::nn::SymbolicTensor& ids, const ModelConfig& c) {
  namespace nn = dlrt::nn;
  nn::SymbolicTensor x = nn::Embedding(kVocabulary, c.d_model)(ids);
  for (int64_t i = 0; i < c.layers; ++i) x = nn::LSTM(c.d_model, /*return_sequences=*/true)(x);
  return nn::Dense(kVocabulary)(x);
}

}  // namespace char_transformer
