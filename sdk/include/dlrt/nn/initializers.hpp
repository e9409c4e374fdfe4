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
//   glorot_normal   N(0, sqrt(2 / (fan_in + fan_out))) — untruncated, for the same reason.
//                   Keras draws a normal truncated at 2 sigma with its stddev scaled up by
//                   1/0.8796 so that the truncated draws keep that variance; here the
//                   variance is the same and the tails are not cut (a draw beyond 2 sigma
//                   is possible, about 5% of them)
//   zeros, ones     fill 0, fill 1
//   constant(v)     fill v (keras.initializers.Constant)
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
  enum class Kind {
    kZeros,
    kOnes,
    kConstant,
    kGlorotUniform,
    kGlorotNormal,
    kHeUniform,
    kHeNormal,
    kRandomUniform  // U(minval, maxval): Keras' RandomUniform (Embedding's default)
  };

  static Initializer zeros() { return Initializer(Kind::kZeros); }
  static Initializer ones() { return Initializer(Kind::kOnes); }
  // INVALID_ARGUMENT for a value that is not finite.
  static Initializer constant(double value) {
    if (!std::isfinite(value))
      throw Error(DLRT_INVALID_ARGUMENT,
                  "Initializer::constant: value " + std::to_string(value) + " is not finite");
    Initializer i(Kind::kConstant);
    i.value_ = value;
    return i;
  }
  static Initializer glorot_uniform() { return Initializer(Kind::kGlorotUniform); }
  static Initializer glorot_normal() { return Initializer(Kind::kGlorotNormal); }
  static Initializer he_uniform() { return Initializer(Kind::kHeUniform); }
  static Initializer he_normal() { return Initializer(Kind::kHeNormal); }
  // keras.initializers.RandomUniform(minval, maxval); Keras' defaults are -0.05 and 0.05.
  // INVALID_ARGUMENT unless minval < maxval, both finite.
  static Initializer random_uniform(double minval = -0.05, double maxval = 0.05) {
    if (!(std::isfinite(minval) && std::isfinite(maxval) && minval < maxval))
      throw Error(DLRT_INVALID_ARGUMENT, "Initializer::random_uniform: needs finite minval < "
                                         "maxval, got " +
                                             std::to_string(minval) + ", " +
                                             std::to_string(maxval));
    Initializer i(Kind::kRandomUniform);
    i.value_ = minval;
    i.max_ = maxval;
    return i;
  }
  // By Keras' name: "zeros", "ones", "glorot_uniform", "glorot_normal", "he_uniform",
  // "he_normal" (constant takes a value: use constant()).
  static Initializer named(const std::string& name) {
    if (name == "zeros") return zeros();
    if (name == "ones") return ones();
    if (name == "glorot_uniform") return glorot_uniform();
    if (name == "glorot_normal") return glorot_normal();
    if (name == "he_uniform") return he_uniform();
    if (name == "he_normal") return he_normal();
    if (name == "uniform" || name == "random_uniform") return random_uniform();
    throw Error(DLRT_INVALID_ARGUMENT,
                "unknown initializer '" + name +
                    "'; expected zeros, ones, glorot_uniform, glorot_normal, "
                    "he_uniform, he_normal or uniform");
  }

  Kind kind() const { return kind_; }
  double value() const { return value_; }  // constant()'s value, random_uniform's minval

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
      case Kind::kConstant:
        return {"fill", {{"value", value_}}};
      case Kind::kGlorotUniform: {
        const double l = std::sqrt(6.0 / (fan_in + fan_out));
        return {"random_uniform", {{"minval", -l}, {"maxval", l}, {"seed", s}}};
      }
      case Kind::kGlorotNormal:
        return {"random_normal",
                {{"mean", 0.0}, {"stddev", std::sqrt(2.0 / (fan_in + fan_out))}, {"seed", s}}};
      case Kind::kHeUniform: {
        const double l = std::sqrt(6.0 / fan_in);
        return {"random_uniform", {{"minval", -l}, {"maxval", l}, {"seed", s}}};
      }
      case Kind::kHeNormal:
        return {"random_normal", {{"mean", 0.0}, {"stddev", std::sqrt(2.0 / fan_in)}, {"seed", s}}};
      case Kind::kRandomUniform:
        return {"random_uniform", {{"minval", value_}, {"maxval", max_}, {"seed", s}}};
    }
    throw Error(DLRT_INTERNAL, "Initializer: unknown kind");
  }

 private:
  explicit Initializer(Kind k) : kind_(k) {}
  Kind kind_;
  double value_ = 0.0;  // constant's value; random_uniform's minval
  double max_ = 0.0;    // random_uniform's maxval
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_INITIALIZERS_HPP_
