// dlrt/nn/dense.hpp: Dense, Keras' fully connected layer, kernel (in,out) and bias (out).
// With activation none/relu/sigmoid/tanh it is one fused op (matmul_bias_act); softmax is a
// separate op after it.
#ifndef DLRT_NN_DENSE_HPP_
#define DLRT_NN_DENSE_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/initializers.hpp"
#include "dlrt/nn/layer.hpp"
#include "dlrt/nn/regularizers.hpp"

namespace dlrt::nn {

// Dense's settings beyond units: nn::Dense(10, {.activation = "relu",
// .kernel_regularizer = nn::Regularizer::l2(1e-4)}).
struct DenseOptions {
  std::string activation = "linear";
  Initializer kernel_initializer = Initializer::glorot_uniform();
  Initializer bias_initializer = Initializer::zeros();
  Regularizer kernel_regularizer = {};
};

// Dense(units, activation = linear) on (None, ..., in), along the last axis; kernel
// Glorot-uniform.
class Dense : public Layer {
 public:
  Dense(int64_t units, const DenseOptions& o);
  // Dense(10, "relu"); a template so that a braced list goes to the options.
  template <typename S, typename = std::enable_if_t<std::is_convertible_v<S, std::string>>>
  Dense(int64_t units, S&& activation)
      : Dense(units, options(std::string(std::forward<S>(activation)))) {}
  explicit Dense(int64_t units) : Dense(units, options("linear")) {}
  std::shared_ptr<Layer> clone() const override;
  std::string type() const override;
  std::string base_name() const override;
  // (None, features) -> (None, units); as Keras, a higher-rank input (None, T..., features)
  // is transformed along its last axis -> (None, T..., units) with the same kernel.
  Shape output_shape(const Shape& in) const override;
  std::vector<ParamSpec> params(const Shape& in) const override;
  Value call(CallContext& c, Value x, const std::vector<Value>& v) const override;

 private:
  static DenseOptions options(std::string activation);
  int64_t units_;
  std::string activation_;
  Initializer kernel_init_, bias_init_;
  Regularizer kernel_reg_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_DENSE_HPP_
