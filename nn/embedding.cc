// embedding.cc: Embedding (dlrt/nn/embedding.hpp).
#include "dlrt/nn/embedding.hpp"

namespace dlrt::nn {

Embedding::Embedding(int64_t input_dim, int64_t output_dim, const EmbeddingOptions& o)
    : input_dim_(input_dim), output_dim_(output_dim), init_(o.embeddings_initializer) {
  if (input_dim < 1 || output_dim < 1)
    throw Error(DLRT_INVALID_ARGUMENT, "Embedding: input_dim and output_dim must be >= 1, got " +
                                           std::to_string(input_dim) + " and " +
                                           std::to_string(output_dim));
}

std::shared_ptr<Layer> Embedding::clone() const { return std::make_shared<Embedding>(*this); }

std::string Embedding::type() const { return "Embedding"; }

std::string Embedding::base_name() const { return "embedding"; }

int64_t Embedding::input_ids() const { return input_dim_; }

Shape Embedding::output_shape(const Shape& in) const {
  if (in.empty() || in.size() + 2 > DLRT_MAX_RANK)
    throw bad_input(in, "(None, T...) ids with 1 to " + std::to_string(DLRT_MAX_RANK - 2) +
                            " dims after the batch");
  Shape out = in;
  out.push_back(output_dim_);
  return out;
}

std::vector<ParamSpec> Embedding::params(const Shape&) const {
  return {{"embeddings", {input_dim_, output_dim_}, init_, true}};
}

Value Embedding::call(CallContext& c, Value x, const std::vector<Value>& v) const {
  if (x.dtype() != DLRT_I32 && x.dtype() != DLRT_I64)
    throw Error(DLRT_INVALID_ARGUMENT,
                display_name() + " (Embedding): takes integer ids (i32 or i64), got " +
                    dtype_name(x.dtype()) +
                    "; feed the model i32/i64 ids and put the Embedding first");
  return c.graph.op1("gather", {v[0], x}, {}, c.node(name_));
}

}  // namespace dlrt::nn
