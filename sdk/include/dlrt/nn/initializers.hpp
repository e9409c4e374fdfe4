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
//   orthogonal(g)   keras.initializers.Orthogonal(gain g): the (rows, cols) view of the dims
//                   (rows = all dims but the last) gets orthonormal rows or columns, whichever
//                   are fewer: QR of a (max, min) standard-normal matrix, Q's columns signed
//                   so that R's diagonal is positive, transposed when rows < cols, times g.
//                   The recurrent kernel of LSTM and GRU (recurrent.hpp).
//   lstm_unit_forget_bias
//                   an LSTM bias (4H): zeros but the forget gate's block [H, 2H), which is 1
//                   (Keras' LSTM with unit_forget_bias=True, Jozefowicz et al. 2015).
// The last two are computed on the host (there is no QR op): their init op is "fill 0" and
// the session writes the values once the variable exists (host_values()). orthogonal's
// normal draws are a SplitMix64 stream + Box-Muller keyed by the same variable seed, so they
// are the same on every device and run, but not the values of a device Philox stream.
// Random ones are Philox streams keyed by the variable's own seed (data.hpp's derive_seed of
// the model seed and the variable's name), so every device draws the same first values.
#ifndef DLRT_NN_INITIALIZERS_HPP_
#define DLRT_NN_INITIALIZERS_HPP_

#include <algorithm>
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
    kRandomUniform,  // U(minval, maxval): Keras' RandomUniform (Embedding's default)
    kOrthogonal,     // host-computed (host_values)
    kLstmUnitForgetBias  // host-computed (host_values)
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
  // keras.initializers.Orthogonal(gain); INVALID_ARGUMENT for a gain that is not finite.
  static Initializer orthogonal(double gain = 1.0) {
    if (!std::isfinite(gain))
      throw Error(DLRT_INVALID_ARGUMENT,
                  "Initializer::orthogonal: gain " + std::to_string(gain) + " is not finite");
    Initializer i(Kind::kOrthogonal);
    i.value_ = gain;
    return i;
  }
  // An LSTM bias (4H) with its forget block at 1 (the header). Only for dims (4H).
  static Initializer lstm_unit_forget_bias() { return Initializer(Kind::kLstmUnitForgetBias); }

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
    if (name == "orthogonal") return orthogonal();
    throw Error(DLRT_INVALID_ARGUMENT,
                "unknown initializer '" + name +
                    "'; expected zeros, ones, glorot_uniform, glorot_normal, "
                    "he_uniform, he_normal, uniform or orthogonal");
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
      case Kind::kOrthogonal:
      case Kind::kLstmUnitForgetBias:
        return {"fill", {{"value", 0.0}}};  // then host_values() is written over it
    }
    throw Error(DLRT_INTERNAL, "Initializer: unknown kind");
  }

  // Whether the first value is computed on the host (host_values) rather than by init_op.
  bool on_host() const { return kind_ == Kind::kOrthogonal || kind_ == Kind::kLstmUnitForgetBias; }

  // The first value of a host-computed initializer for a variable of `dims` (row-major).
  std::vector<float> host_values(const std::vector<int64_t>& dims, uint64_t seed) const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    if (kind_ == Kind::kLstmUnitForgetBias) {
      if (dims.size() != 1 || dims[0] % 4 != 0)
        throw Error(DLRT_INVALID_ARGUMENT,
                    "Initializer::lstm_unit_forget_bias: needs dims (4H), got rank " +
                        std::to_string(dims.size()));
      const int64_t h = dims[0] / 4;
      std::vector<float> v(static_cast<size_t>(n), 0.f);
      for (int64_t j = h; j < 2 * h; ++j) v[static_cast<size_t>(j)] = 1.f;
      return v;
    }
    if (kind_ != Kind::kOrthogonal)
      throw Error(DLRT_INTERNAL, "Initializer::host_values: not a host-computed initializer");
    if (dims.size() < 2)
      throw Error(DLRT_INVALID_ARGUMENT,
                  "Initializer::orthogonal: needs a variable of rank >= 2, got rank " +
                      std::to_string(dims.size()));
    const int64_t cols = dims.back(), rows = n / cols;
    return orthogonal_values(rows, cols, value_, seed);
  }

 private:
  explicit Initializer(Kind k) : kind_(k) {}

  // SplitMix64 (Steele et al. 2014): the host's random stream, portable bit for bit.
  static uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // A (rows, cols) matrix, row-major, whose rows (rows <= cols) or columns (rows > cols) are
  // orthonormal, times gain: a = (m, k) standard normals, m = max, k = min; modified
  // Gram-Schmidt on a's columns in double gives Q (m, k) with R's diagonal positive (what
  // Keras' q * sign(diag(r)) gives); transposed when rows < cols.
  static std::vector<float> orthogonal_values(int64_t rows, int64_t cols, double gain,
                                              uint64_t seed) {
    const int64_t m = std::max(rows, cols), k = std::min(rows, cols);
    std::vector<double> a(static_cast<size_t>(m * k));  // a[r * k + j]
    uint64_t state = seed;
    auto unit = [&] { return (double(splitmix64(state) >> 11) + 0.5) * 0x1.0p-53; };  // (0,1)
    for (size_t i = 0; i < a.size(); i += 2) {  // Box-Muller: two normals per two uniforms
      const double r = std::sqrt(-2.0 * std::log(unit())), t = 6.283185307179586 * unit();
      a[i] = r * std::cos(t);
      if (i + 1 < a.size()) a[i + 1] = r * std::sin(t);
    }
    for (int64_t j = 0; j < k; ++j) {
      for (int64_t p = 0; p < j; ++p) {  // remove the earlier columns' components
        double dot = 0;
        for (int64_t r = 0; r < m; ++r) dot += a[size_t(r * k + p)] * a[size_t(r * k + j)];
        for (int64_t r = 0; r < m; ++r) a[size_t(r * k + j)] -= dot * a[size_t(r * k + p)];
      }
      double norm = 0;
      for (int64_t r = 0; r < m; ++r) norm += a[size_t(r * k + j)] * a[size_t(r * k + j)];
      norm = std::sqrt(norm);
      for (int64_t r = 0; r < m; ++r) a[size_t(r * k + j)] /= norm;
    }
    std::vector<float> out(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        out[size_t(r * cols + c)] =
            static_cast<float>(gain * (rows >= cols ? a[size_t(r * k + c)] : a[size_t(c * k + r)]));
    return out;
  }

  Kind kind_;
  double value_ = 0.0;  // constant's value; random_uniform's minval
  double max_ = 0.0;    // random_uniform's maxval
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_INITIALIZERS_HPP_
