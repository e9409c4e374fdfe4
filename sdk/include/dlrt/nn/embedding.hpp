// dlrt/nn/embedding.hpp: Embedding(input_dim, output_dim), Keras' embedding lookup layer.
//
//   x (batch, T...) i32|i64 ids in [0, input_dim)  ->  y (batch, T..., output_dim)
//   y[b, t...] = embeddings[x[b, t...]],  embeddings (input_dim, output_dim) trainable
//
// One `gather` op (axis 0); its gradient is a deterministic `scatter_add` of dy into the rows
// the ids name (docs/ops.md), so training gives the same bits on every run. The weights start
// as Keras' do: uniform in [-0.05, 0.05) (embeddings_initializer "uniform").
//
// Ids reach the layer as integers: a model whose input is read only by Embedding layers takes
// x of dtype i32 or i64, feeds it unchanged (other models cast x to f32) and checks every id
// on the host, so an id outside [0, input_dim) is INVALID_ARGUMENT naming the id, its sample
// and input_dim on every device, before anything runs (session.hpp, model.hpp check_data).
// An Embedding deeper in a model (on a computed tensor) would need integer layers before it,
// which nn does not have: calling it on a float tensor is INVALID_ARGUMENT.
#ifndef DLRT_NN_EMBEDDING_HPP_
#define DLRT_NN_EMBEDDING_HPP_

#include <memory>
#include <string>
#include <vector>

#include "dlrt/nn/initializers.hpp"
#include "dlrt/nn/layers.hpp"

namespace dlrt::nn {

struct EmbeddingOptions {
  Initializer embeddings_initializer = Initializer::random_uniform(-0.05, 0.05);
};

class Embedding : public Layer {
 public:
  Embedding(int64_t input_dim, int64_t output_dim, const EmbeddingOptions& o = {})
      : input_dim_(input_dim), output_dim_(output_dim), init_(o.embeddings_initializer) {
    if (input_dim < 1 || output_dim < 1)
      throw Error(DLRT_INVALID_ARGUMENT, "Embedding: input_dim and output_dim must be >= 1, got " +
                                             std::to_string(input_dim) + " and " +
                                             std::to_string(output_dim));
  }
  std::shared_ptr<Layer> clone() const override { return std::make_shared<Embedding>(*this); }
  std::string type() const override { return "Embedding"; }
  std::string base_name() const override { return "embedding"; }
  int64_t input_ids() const override { return input_dim_; }
  int64_t input_dim() const { return input_dim_; }
  int64_t output_dim() const { return output_dim_; }

  // (T...) -> (T..., output_dim); the batch dim comes on top, so T... has at most
  // DLRT_MAX_RANK - 2 dims.
  Shape output_shape(const Shape& in) const override {
    if (in.empty() || in.size() + 2 > DLRT_MAX_RANK)
      throw bad_input(in, "(None, T...) ids with 1 to " + std::to_string(DLRT_MAX_RANK - 2) +
                              " dims after the batch");
    Shape out = in;
    out.push_back(output_dim_);
    return out;
  }
  std::vector<ParamSpec> params(const Shape&) const override {
    return {{"embeddings", {input_dim_, output_dim_}, init_, true}};
  }
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override {
    if (x.dtype() != DLRT_I32 && x.dtype() != DLRT_I64)
      throw Error(DLRT_INVALID_ARGUMENT,
                  display_name() + " (Embedding): takes integer ids (i32 or i64), got " +
                      dtype_name(x.dtype()) +
                      "; feed the model i32/i64 ids and put the Embedding first");
    return c.graph.op1("gather", {v[0], x}, {}, c.node(name_));
  }

 private:
  int64_t input_dim_, output_dim_;
  Initializer init_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_EMBEDDING_HPP_
