// dlrt/nn/initializers.hpp: how a variable gets its first value — as an init op of the graph
// (dlrt_graph_variable's init_op), so it is drawn on the variable's own device.
//
// Keras' defaults: Conv2D and Dense kernels Glorot-uniform, biases zeros. The fans are those
// of Keras: a Dense kernel (in, out) has fan_in = in, fan_out = out; a conv kernel
// (KH, KW, Ci, Co) has fan_in = KH*KW*Ci and fan_out = KH*KW*Co.
//   glorot_uniform  U(-l, l), l = sqrt(6 / (fan_in + fan_out))
//   he_uniform      U(-l, l), l = sqrt(6 / fan_in)
//   he_normal       N(0, sqrt(2 / fan_in)) — untruncated (Keras truncates at 2 sigma; the op
//                   set has no truncated normal)
//   zeros           fill 0
//   ones            fill 1 (BatchNormalization's gamma and moving_variance)
// Random ones are Philox streams keyed by the variable's own seed (data.hpp's derive_seed of
// the model seed and the variable's name), so every device draws the same first values.
#ifndef DLRT_NN_INITIALIZERS_HPP_
#define DLRT_NN_INITIALIZERS_HPP_

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"

namespace dlrt::nn {

class Initializer {
 public:
  enum class Kind { kZeros, kGlorotUniform, kHeUniform, kHeNormal, kOnes };

  static Initializer zeros() { return Initializer(Kind::kZeros); }
  static Initializer ones() { return Initializer(Kind::kOnes); }
  static Initializer glorot_uniform() { return Initializer(Kind::kGlorotUniform); }
  static Initializer he_uniform() { return Initializer(Kind::kHeUniform); }
  static Initializer he_normal() { return Initializer(Kind::kHeNormal); }
  // By Keras' name: "zeros", "ones", "glorot_uniform", "he_uniform", "he_normal".
  static Initializer named(const std::string& name) {
    if (name == "zeros") return zeros();
    if (name == "ones") return ones();
    if (name == "glorot_uniform") return glorot_uniform();
    if (name == "he_uniform") return he_uniform();
    if (name == "he_normal") return he_normal();
    throw Error(DLRT_INVALID_ARGUMENT, "unknown initializer '" + name +
                                           "'; expected zeros, ones, glorot_uniform, he_uniform "
                                           "or he_normal");
  }

  Kind kind() const { return kind_; }

  // (fan_in, fan_out) of a kernel of these dims, as Keras computes them.
  static std::pair<double, double> fans(const std::vector<int64_t>& dims) {
    if (dims.size() < 2) {
      const double n = dims.empty() ? 1.0 : static_cast<double>(dims[0]);
      return {n, n};
    }
    double receptive = 1.0;
    for (size_t i = 0; i + 2 < dims.size(); ++i) receptive *= static_cast<double>(dims[i]);
    return {receptive * static_cast<double>(dims[dims.size() - 2]),
            receptive * static_cast<double>(dims.back())};
  }

  // The init op and its attributes for a variable of `dims` ("shape"/"dtype" are added by
  // dlrt_graph_variable from the variable's desc).
  std::pair<std::string, OpAttrs> init_op(const std::vector<int64_t>& dims, uint64_t seed) const {
    const auto [fan_in, fan_out] = fans(dims);
    const int64_t s = static_cast<int64_t>(seed);
    switch (kind_) {
      case Kind::kZeros:
        return {"fill", {{"value", 0.0}}};
      case Kind::kOnes:
        return {"fill", {{"value", 1.0}}};
      case Kind::kGlorotUniform: {
        const double l = std::sqrt(6.0 / (fan_in + fan_out));
        return {"random_uniform", {{"minval", -l}, {"maxval", l}, {"seed", s}}};
      }
      case Kind::kHeUniform: {
        const double l = std::sqrt(6.0 / fan_in);
        return {"random_uniform", {{"minval", -l}, {"maxval", l}, {"seed", s}}};
      }
      case Kind::kHeNormal:
        return {"random_normal", {{"mean", 0.0}, {"stddev", std::sqrt(2.0 / fan_in)}, {"seed", s}}};
    }
    throw Error(DLRT_INTERNAL, "Initializer: unknown kind");
  }

 private:
  explicit Initializer(Kind k) : kind_(k) {}
  Kind kind_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_INITIALIZERS_HPP_
