// transformer.cc: TokenAndPositionEmbedding and TransformerBlock (dlrt/nn/transformer.hpp).
#include "dlrt/nn/transformer.hpp"

namespace dlrt::nn {

TokenAndPositionEmbedding::TokenAndPositionEmbedding(int64_t vocabulary_size,
                                                     int64_t sequence_length, int64_t embedding_dim)
    : vocab_(vocabulary_size), length_(sequence_length), dim_(embedding_dim) {
  if (vocabulary_size < 1 || sequence_length < 1 || embedding_dim < 1)
    throw Error(DLRT_INVALID_ARGUMENT,
                "TokenAndPositionEmbedding: vocabulary_size, sequence_length and "
                "embedding_dim must be >= 1");
}

std::shared_ptr<Layer> TokenAndPositionEmbedding::clone() const {
  return std::make_shared<TokenAndPositionEmbedding>(*this);
}

std::string TokenAndPositionEmbedding::type() const { return "TokenAndPositionEmbedding"; }

std::string TokenAndPositionEmbedding::base_name() const { return "token_and_position_embedding"; }

int64_t TokenAndPositionEmbedding::input_ids() const { return vocab_; }

Shape TokenAndPositionEmbedding::output_shape(const Shape& in) const {
  if (in.size() != 1) throw bad_input(in, "(None, T) token ids");
  if (in[0] > length_)
    throw bad_input(in, "a sequence of at most " + std::to_string(length_) +
                            " tokens (the position table's length); it has " +
                            std::to_string(in[0]));
  return {in[0], dim_};
}

std::vector<ParamSpec> TokenAndPositionEmbedding::params(const Shape&) const {
  const Initializer u = Initializer::random_uniform(-0.05, 0.05);
  return {{"token_embedding/embeddings", {vocab_, dim_}, u, true},
          {"position_embedding/embeddings", {length_, dim_}, u, true}};
}

Value TokenAndPositionEmbedding::call(CallContext& c, Value x, const std::vector<Value>& v) const {
  if (x.dtype() != DLRT_I32 && x.dtype() != DLRT_I64)
    throw Error(DLRT_INVALID_ARGUMENT, display_name() +
                                           " (TokenAndPositionEmbedding): takes integer ids "
                                           "(i32 or i64), got " +
                                           dtype_name(x.dtype()));
  const int64_t t = x.dims().at(1);
  Value tok = c.graph.op1("gather", {v[0], x}, {}, c.node(name_) + "/token");
  Value pos = t == length_ ? v[1]
                           : c.graph.op1("slice", {v[1]},
                                         {{"begin", std::vector<int64_t>{0}},
                                          {"end", std::vector<int64_t>{t}},
                                          {"axes", std::vector<int64_t>{0}}});
  return c.graph.op1("add", {tok, pos}, {}, c.node(name_));
}

TransformerBlock::TransformerBlock(int64_t num_heads, int64_t intermediate_dim,
                                   const TransformerBlockOptions& o)
    : heads_(num_heads), inner_(intermediate_dim), o_(o), act_(o.activation) {
  if (num_heads < 1 || intermediate_dim < 1)
    throw Error(DLRT_INVALID_ARGUMENT,
                "TransformerBlock: num_heads and intermediate_dim must be >= 1");
  if (!(o.dropout >= 0.0 && o.dropout < 1.0))
    throw Error(DLRT_INVALID_ARGUMENT, "TransformerBlock: dropout must be in [0, 1)");
}

std::shared_ptr<Layer> TransformerBlock::clone() const {
  return std::make_shared<TransformerBlock>(*this);
}

std::string TransformerBlock::type() const { return "TransformerBlock"; }

std::string TransformerBlock::base_name() const { return "transformer_block"; }

Shape TransformerBlock::output_shape(const Shape& in) const {
  check(in);
  return in;
}

std::vector<ParamSpec> TransformerBlock::params(const Shape& in) const {
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

Value TransformerBlock::call(CallContext& c, Value x, const std::vector<Value>& v) const {
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

MultiHeadAttention TransformerBlock::attention(int64_t key_dim) const {
  MultiHeadAttentionOptions m;
  m.dropout = o_.dropout;
  m.use_causal_mask = o_.use_causal_mask;
  return MultiHeadAttention(heads_, key_dim, m);
}

void TransformerBlock::check(const Shape& in) const {
  if (in.size() != 2) throw bad_input(in, "(None, T, d)");
  if (in[1] % heads_ != 0)
    throw bad_input(in, "a model width d divisible by num_heads = " + std::to_string(heads_));
  act_.output_shape(in);  // refuses an activation whose op this runtime lacks
}

Value TransformerBlock::residual_dropout(CallContext& c, Value x, const std::string& which) const {
  if (!c.training || o_.dropout == 0.0) return x;
  return c.graph.op1("dropout", {x},
                     {{"rate", o_.dropout},
                      {"seed", static_cast<int64_t>(derive_seed(c.seed, name_ + "/" + which))}},
                     c.node(name_) + "/" + which + "_dropout");
}

}  // namespace dlrt::nn
