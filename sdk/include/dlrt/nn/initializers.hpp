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
    kRandomUniform,      // U(minval, maxval): Keras' RandomUniform (Embedding's default)
    kOrthogonal,         // host-computed (host_values)
    kLstmUnitForgetBias  // host-computed (host_values)
  };

  static Initializer zeros() { return Initializer(Kind::kZeros); }
  static Initializer ones() { return Initializer(Kind::kOnes); }
  // INVALID_ARGUMENT for a value that is not finite.
  static Initializer constant(double value);
  static Initializer glorot_uniform() { return Initializer(Kind::kGlorotUniform); }
  static Initializer glorot_normal() { return Initializer(Kind::kGlorotNormal); }
  static Initializer he_uniform() { return Initializer(Kind::kHeUniform); }
  static Initializer he_normal() { return Initializer(Kind::kHeNormal); }
  // keras.initializers.RandomUniform(minval, maxval); Keras' defaults are -0.05 and 0.05.
  // INVALID_ARGUMENT unless minval < maxval, both finite.
  static Initializer random_uniform(double minval = -0.05, double maxval = 0.05);
  // keras.initializers.Orthogonal(gain); INVALID_ARGUMENT for a gain that is not finite.
  static Initializer orthogonal(double gain = 1.0);
  // An LSTM bias (4H) with its forget block at 1 (the header). Only for dims (4H).
  static Initializer lstm_unit_forget_bias() { return Initializer(Kind::kLstmUnitForgetBias); }

  // By Keras' name: "zeros", "ones", "glorot_uniform", "glorot_normal", "he_uniform",
  // "he_normal" (constant takes a value: use constant()).
  static Initializer named(const std::string& name);

  Kind kind() const { return kind_; }
  double value() const { return value_; }  // constant()'s value, random_uniform's minval

  // (fan_in, fan_out) of a kernel of these dims, as Keras computes them.
  static std::pair<double, double> fans(const std::vector<int64_t>& dims);

  // The init op and its attributes for a variable of `dims` ("shape"/"dtype" are added by
  // dlrt_graph_variable from the variable's desc).
  std::pair<std::string, OpAttrs> init_op(const std::vector<int64_t>& dims, uint64_t seed) const;

  // Whether the first value is computed on the host (host_values) rather than by init_op.
  bool on_host() const { return kind_ == Kind::kOrthogonal || kind_ == Kind::kLstmUnitForgetBias; }

  // The first value of a host-computed initializer for a variable of `dims` (row-major).
  std::vector<float> host_values(const std::vector<int64_t>& dims, uint64_t seed) const;

 private:
  explicit Initializer(Kind k) : kind_(k) {}

  // SplitMix64 (Steele et al. 2014): the host's random stream, portable bit for bit.
  static uint64_t splitmix64(uint64_t& state);
  // A (rows, cols) matrix, row-major, whose rows (rows <= cols) or columns (rows > cols) are
  // orthonormal, times gain: a = (m, k) standard normals, m = max, k = min; modified
  // Gram-Schmidt on a's columns in double gives Q (m, k) with R's diagonal positive (what
  // Keras' q * sign(diag(r)) gives); transposed when rows < cols.
  static std::vector<float> orthogonal_values(int64_t rows, int64_t cols, double gain,
                                              uint64_t seed);

  Kind kind_;
  double value_ = 0.0;  // constant's value; random_uniform's minval
  double max_ = 0.0;    // random_uniform's maxval
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_INITIALIZERS_HPP_
