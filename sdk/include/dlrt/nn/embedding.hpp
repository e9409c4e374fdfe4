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
  Embedding(int64_t input_dim, int64_t output_dim, const EmbeddingOptions& o = {});
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
  int64_t input_ids() const override;
  int64_t input_dim() const { return input_dim_; }
  int64_t output_dim() const { return output_dim_; }

  // (T...) -> (T..., output_dim); the batch dim comes on top, so T... has at most
  // DLRT_MAX_RANK - 2 dims.
  Shape output_shape(const Shape& in) const override;
  std::vector<ParamSpec> params(const Shape&) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override;

 private:
  int64_t input_dim_, output_dim_;
  Initializer init_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_EMBEDDING_HPP_
