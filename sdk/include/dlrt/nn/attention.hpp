// dlrt/nn/attention.hpp: Keras' MultiHeadAttention layer (Vaswani et al. 2017).
//
//   nn::MultiHeadAttention(num_heads, key_dim, {.use_causal_mask = true})
//   y = mha(x);             // self-attention: query = value = key = x
//   y = mha({q, v});        // cross-attention: key = value
//   y = mha({q, v, k});
//   y = mha({q, v, k, attention_mask});   // Keras' call argument, as a fourth tensor
//
// Shapes (batch dim left out): query (Tq, Dq), value (Tk, Dv), key (Tk, Dk) -> (Tq, Dq), as
// Keras (its output_shape defaults to the query's last dim). With H heads of key_dim dk and
// value_dim dv (default dk):
//   Q = query Wq + bq  (Tq, H*dk) -> (H, Tq, dk)      K = key Wk + bk    (Tk, H*dk) -> (H, Tk, dk)
//   V = value Wv + bv  (Tk, H*dv) -> (H, Tk, dv)
//   O = softmax(Q K^T / sqrt(dk) [+ causal mask]) V   (H, Tq, dv) -> (Tq, H*dv)
//   y = O Wo + bo (Tq, Dq)
// The causal mask lets query i see key j only when j <= i + (Tk - Tq): the last query sees
// every key (with Tq = Tk, the usual lower triangle; Tq < Tk is a query block at the end of a
// longer key sequence, as when keys come from a cache).
//
// attention_mask (Keras'): (Tq, Tk), or (1, Tk) broadcast over the queries (a key padding
// mask), per sample; 1 (or any non-zero value, or true) = query i may attend to key j, 0 =
// it may not. Combined with the causal mask when both are on. A masked key's score becomes a
// large negative number before the softmax (-1e9; -3e4 for f16 scores: Keras' numbers), not
// -inf, so a query whose keys are all masked stays finite: it attends evenly to them all
// (Keras does the same), with a zero gradient to its scores. The key must then be passed, even when it is
// the value: [query, value, value, mask] (nn::Model keeps a node's inputs as a plain list;
// Python's layer(query, value, attention_mask=m) does that for you).
//
// Parameters: query/kernel (Dq, H*dk), query/bias (H*dk), key/kernel (Dk, H*dk), key/bias,
// value/kernel (Dv, H*dv), value/bias (H*dv), attention_output/kernel (H*dv, Dq),
// attention_output/bias (Dq); kernels Glorot-uniform over these 2-D shapes, biases zeros.
// Keras keeps the same numbers as 3-D einsum kernels (Dq, H, dk) and (H, dv, Dq), whose
// Glorot fans differ; the 2-D form is PyTorch's in/out projections and one plain matmul each.
//
// Ops: matmul_bias_act for the projections, transpose to heads-major, then the fused
// `attention` op (scaled dot-product attention with a causal flag, forward and backward
// fused; docs/ops.md) when the attention probabilities take no dropout. With `dropout` > 0
// in the training step the probabilities are materialised (batch_matmul, causal_mask,
// softmax, dropout, batch_matmul), as Keras drops attention weights, not outputs. With an
// attention_mask the probabilities are materialised the same way, the mask applied before the
// causal mask (batch_matmul, mul, not_equal, where, causal_mask, softmax, [dropout,]
// batch_matmul): no fused kernel takes a mask, and these ops have every device's kernels
// and gradient rules already.
#ifndef DLRT_NN_ATTENTION_HPP_
#define DLRT_NN_ATTENTION_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/layers.hpp"

namespace dlrt::nn {

struct MultiHeadAttentionOptions {
  int64_t value_dim = 0;  // dv; 0: key_dim
  double dropout = 0.0;   // on the attention probabilities, training step only
  bool use_bias = true;
  bool use_causal_mask = false;  // Keras' call argument, fixed here when the layer is made
};

namespace detail {

// (B, T, H*dh) -> (B, H, T, dh): the heads side by side become a leading axis.
Value split_heads(Graph& g, Value x, int64_t heads);

// (B, H, T, dh) -> (B, T, H*dh).
Value merge_heads(Graph& g, Value x);

// x (B, T, Din) W (Din, N) + b (N) -> (B, T, N), as one matmul over the B*T rows.
Value project(Graph& g, Value x, Value w, Value b, const std::string& name);

}  // namespace detail

class MultiHeadAttention : public Layer {
 public:
  MultiHeadAttention(int64_t num_heads, int64_t key_dim, const MultiHeadAttentionOptions& o = {});
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
  int64_t num_heads() const { return heads_; }
  int64_t key_dim() const { return key_dim_; }
  int64_t value_dim() const { return value_dim_; }
  bool causal() const { return causal_; }

  Shape output_shape(const Shape& in) const override;
  std::vector<ParamSpec> params(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override;

  // [query], [query, value], [query, value, key], each (T, D), or [query, value, key,
  // attention_mask] with the mask (Tq, Tk) or (1, Tk).
  Shape output_shape_multi(const std::vector<Shape>& in) const override;
  std::vector<ParamSpec> params_multi(const std::vector<Shape>& in) const override;

  Value call_multi(CallContext& c, const std::vector<Value>& xs,
                   const std::vector<Value>& v) const override;

  // softmax(q k^T / sqrt(dk) [+ causal mask] [masked]) v on heads-major (B, H, T, dh)
  // tensors; public for the layers and decoders built from this one (TransformerBlock, a
  // key/value-cache step). `mask`, when given, is an attention_mask (B, Tq or 1, Tk) of any
  // dtype (non-zero = may attend); without it the fused `attention` op runs (unless dropout).
  Value attend(CallContext& c, Value q, Value k, Value v, Value mask = Value()) const;

 private:
  // [query, value, key(, attention_mask)] shapes from the 1 to 4 given; checks each is
  // (T, D), that key and value have the same length, and the mask's shape.
  std::vector<Shape> roles(const std::vector<Shape>& in) const;

  int64_t heads_, key_dim_, value_dim_;
  double dropout_;
  bool use_bias_, causal_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_ATTENTION_HPP_
