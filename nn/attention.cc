// attention.cc: MultiHeadAttention and its head-splitting helpers (dlrt/nn/attention.hpp).
#include "dlrt/nn/attention.hpp"

#include <cmath>

namespace dlrt::nn {

Value detail::split_heads(Graph& g, Value x, int64_t heads) {
  const std::vector<int64_t> d = x.dims();
  Value r =
      g.op1("reshape", {x}, {{"shape", std::vector<int64_t>{d[0], d[1], heads, d[2] / heads}}});
  return g.op1("transpose", {r}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
}

Value detail::merge_heads(Graph& g, Value x) {
  const std::vector<int64_t> d = x.dims();
  Value t = g.op1("transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  return g.op1("reshape", {t}, {{"shape", std::vector<int64_t>{d[0], d[2], d[1] * d[3]}}});
}

Value detail::project(Graph& g, Value x, Value w, Value b, const std::string& name) {
  const std::vector<int64_t> d = x.dims();
  const int64_t n = w.dims()[1];
  Value rows = g.op1("reshape", {x}, {{"shape", std::vector<int64_t>{d[0] * d[1], d[2]}}});
  Value y = b ? g.op1("matmul_bias_act", {rows, w, b}, {{"activation", std::string("none")}})
              : g.op1("matmul", {rows, w});
  return g.op1("reshape", {y}, {{"shape", std::vector<int64_t>{d[0], d[1], n}}}, name);
}

MultiHeadAttention::MultiHeadAttention(int64_t num_heads, int64_t key_dim,
                                       const MultiHeadAttentionOptions& o)
    : heads_(num_heads),
      key_dim_(key_dim),
      value_dim_(o.value_dim ? o.value_dim : key_dim),
      dropout_(o.dropout),
      use_bias_(o.use_bias),
      causal_(o.use_causal_mask) {
  if (num_heads < 1 || key_dim < 1 || value_dim_ < 1)
    throw Error(DLRT_INVALID_ARGUMENT,
                "MultiHeadAttention: num_heads, key_dim and value_dim must be >= 1, got " +
                    std::to_string(num_heads) + ", " + std::to_string(key_dim) + " and " +
                    std::to_string(value_dim_));
  if (!(o.dropout >= 0.0 && o.dropout < 1.0))
    throw Error(DLRT_INVALID_ARGUMENT, "MultiHeadAttention: dropout must be in [0, 1)");
}

std::shared_ptr<Layer> MultiHeadAttention::clone() const {
  return std::make_shared<MultiHeadAttention>(*this);
}

std::string MultiHeadAttention::type() const { return "MultiHeadAttention"; }

std::string MultiHeadAttention::base_name() const { return "multi_head_attention"; }

Shape MultiHeadAttention::output_shape(const Shape& in) const { return output_shape_multi({in}); }

std::vector<ParamSpec> MultiHeadAttention::params(const Shape& in) const {
  return params_multi({in});
}

Value MultiHeadAttention::call(CallContext& c, Value x, const std::vector<Value>& v) const {
  return call_multi(c, {x}, v);
}

Shape MultiHeadAttention::output_shape_multi(const std::vector<Shape>& in) const {
  const std::vector<Shape> s = roles(in);
  return s[0];
}

std::vector<ParamSpec> MultiHeadAttention::params_multi(const std::vector<Shape>& in) const {
  const std::vector<Shape> s = roles(in);  // query, value, key
  const int64_t hk = heads_ * key_dim_, hv = heads_ * value_dim_;
  const Initializer w = Initializer::glorot_uniform(), z = Initializer::zeros();
  std::vector<ParamSpec> p;
  auto dense = [&](const std::string& name, int64_t in_dim, int64_t out_dim) {
    p.push_back({name + "/kernel", {in_dim, out_dim}, w, true});
    if (use_bias_) p.push_back({name + "/bias", {out_dim}, z, true});
  };
  dense("query", s[0].back(), hk);
  dense("key", s[2].back(), hk);
  dense("value", s[1].back(), hv);
  dense("attention_output", hv, s[0].back());
  return p;
}

Value MultiHeadAttention::call_multi(CallContext& c, const std::vector<Value>& xs,
                                     const std::vector<Value>& v) const {
  const Value query = xs.at(0);
  const Value value = xs.size() > 1 ? xs[1] : query;
  const Value key = xs.size() > 2 ? xs[2] : value;
  const Value mask = xs.size() > 3 ? xs[3] : Value();
  Graph& g = c.graph;
  const std::string n = c.node(name_);
  size_t k = 0;
  auto next = [&](bool present) { return present ? v.at(k++) : Value(); };
  const Value wq = next(true), bq = next(use_bias_), wk = next(true), bk = next(use_bias_);
  const Value wv = next(true), bv = next(use_bias_), wo = next(true), bo = next(use_bias_);
  const Value q = detail::split_heads(g, detail::project(g, query, wq, bq, n + "/query"), heads_);
  const Value kk = detail::split_heads(g, detail::project(g, key, wk, bk, n + "/key"), heads_);
  const Value vv = detail::split_heads(g, detail::project(g, value, wv, bv, n + "/value"), heads_);
  const Value o = attend(c, q, kk, vv, mask);
  return detail::project(g, detail::merge_heads(g, o), wo, bo, n);
}

Value MultiHeadAttention::attend(CallContext& c, Value q, Value k, Value v, Value mask) const {
  Graph& g = c.graph;
  const double scale = 1.0 / std::sqrt(static_cast<double>(key_dim_));
  const bool drop = c.training && dropout_ > 0.0;
  if (!drop && !mask)
    return g.op("attention", {q, k, v}, {{"scale", scale}, {"causal", int64_t(causal_)}})[0];
  // The materialised path: scores (B, H, Tq, Tk), then the masks, softmax, dropout.
  Value s = g.op1("batch_matmul", {q, k}, {{"transpose_b", true}});
  // Constants are made in f32 and cast to the scores' dtype (bf16/f16 under a mixed policy).
  auto as_scores = [&](Value x) {
    return x.dtype() == s.dtype() ? x : g.op1("cast", {x}, {{"dtype", s.dtype()}});
  };
  s = g.op1("mul", {s, as_scores(g.constant<float>("", {}, {static_cast<float>(scale)}))});
  if (mask) {
    // mask (B, Tq or 1, Tk) -> (B, 1, Tq or 1, Tk), broadcast over the heads; where it is 0
    // the score is replaced by a large negative number (`where`, not an added bias: the
    // masked scores then get no gradient, and a row masked everywhere is a softmax of equal
    // scores, finite, whose gradient is 0, as its output depends on none of them). f16's
    // range stops at 65504, hence Keras' -3e4 there.
    const std::vector<int64_t> md = mask.dims();
    Value m = g.op1("reshape", {mask}, {{"shape", std::vector<int64_t>{md[0], 1, md[1], md[2]}}});
    if (m.dtype() != DLRT_F32) m = g.op1("cast", {m}, {{"dtype", DLRT_F32}});
    const float big = s.dtype() == DLRT_F16 ? -3e4f : -1e9f;
    Value keep = g.op1("not_equal", {m, g.constant<float>("", {}, {0.f})});
    s = g.op1("where", {keep, s, as_scores(g.constant<float>("", {}, {big}))}, {},
              c.node(name_) + "/attention_mask");
  }
  // After the mask, so that a query whose keys are all masked still sees no future key (its
  // -inf stays): it attends evenly to the keys up to its own.
  if (causal_) s = g.op1("causal_mask", {s});
  Value p = g.op1("softmax", {s}, {{"axis", int64_t(-1)}});
  if (drop)
    p = g.op1("dropout", {p},
              {{"rate", dropout_},
               {"seed", static_cast<int64_t>(derive_seed(c.seed, name_ + "/attention"))}},
              c.node(name_) + "/attention_dropout");
  return g.op1("batch_matmul", {p, v});
}

std::vector<Shape> MultiHeadAttention::roles(const std::vector<Shape>& in) const {
  if (in.empty() || in.size() > 4)
    throw Error(DLRT_INVALID_ARGUMENT,
                display_name() + " (MultiHeadAttention): called on " + std::to_string(in.size()) +
                    " tensors; expected [query], [query, value], [query, value, key] or "
                    "[query, value, key, attention_mask]");
  std::vector<Shape> s = {in[0], in.size() > 1 ? in[1] : in[0],
                          in.size() > 2 ? in[2] : (in.size() > 1 ? in[1] : in[0])};
  const char* names[] = {"query", "value", "key"};
  for (int i = 0; i < 3; ++i)
    if (s[i].size() != 2) throw bad_input(s[i], std::string("(None, T, D) for the ") + names[i]);
  if (s[1][0] != s[2][0])
    throw Error(DLRT_INVALID_ARGUMENT, display_name() + " (MultiHeadAttention): value " +
                                           shape_string(s[1]) + " and key " + shape_string(s[2]) +
                                           " have different lengths; expected the same T");
  if (causal_ && s[0][0] > s[1][0])
    throw Error(DLRT_INVALID_ARGUMENT,
                display_name() +
                    " (MultiHeadAttention): the causal mask needs at most as "
                    "many queries as keys; query " +
                    shape_string(s[0]) + ", key " + shape_string(s[2]));
  if (in.size() == 4) {
    const Shape& m = in[3];
    const int64_t tq = s[0][0], tk = s[2][0];
    if (m.size() != 2 || (m[0] != tq && m[0] != 1) || m[1] != tk)
      throw Error(DLRT_INVALID_ARGUMENT,
                  display_name() + " (MultiHeadAttention): attention_mask " + shape_string(m) +
                      " does not fit query " + shape_string(s[0]) + " and key " +
                      shape_string(s[2]) + "; expected " + shape_string({tq, tk}) +
                      " (batch, queries, keys) or " + shape_string({1, tk}) +
                      " (a key mask for every query)");
    s.push_back(m);
  }
  return s;
}

}  // namespace dlrt::nn
