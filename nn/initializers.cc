// initializers.cc: Initializer: init ops and the host-computed values (dlrt/nn/initializers.hpp).
#include "dlrt/nn/initializers.hpp"

#include <algorithm>
#include <cmath>

namespace dlrt::nn {

Initializer Initializer::constant(double value) {
  if (!std::isfinite(value))
    throw Error(DLRT_INVALID_ARGUMENT,
                "Initializer::constant: value " + std::to_string(value) + " is not finite");
  Initializer i(Kind::kConstant);
  i.value_ = value;
  return i;
}

Initializer Initializer::random_uniform(double minval, double maxval) {
  if (!(std::isfinite(minval) && std::isfinite(maxval) && minval < maxval))
    throw Error(DLRT_INVALID_ARGUMENT,
                "Initializer::random_uniform: needs finite minval < "
                "maxval, got " +
                    std::to_string(minval) + ", " + std::to_string(maxval));
  Initializer i(Kind::kRandomUniform);
  i.value_ = minval;
  i.max_ = maxval;
  return i;
}

Initializer Initializer::orthogonal(double gain) {
  if (!std::isfinite(gain))
    throw Error(DLRT_INVALID_ARGUMENT,
                "Initializer::orthogonal: gain " + std::to_string(gain) + " is not finite");
  Initializer i(Kind::kOrthogonal);
  i.value_ = gain;
  return i;
}

Initializer Initializer::named(const std::string& name) {
  if (name == "zeros") return zeros();
  if (name == "ones") return ones();
  if (name == "glorot_uniform") return glorot_uniform();
  if (name == "glorot_normal") return glorot_normal();
  if (name == "he_uniform") return he_uniform();
  if (name == "he_normal") return he_normal();
  if (name == "uniform" || name == "random_uniform") return random_uniform();
  if (name == "orthogonal") return orthogonal();
  throw Error(DLRT_INVALID_ARGUMENT, "unknown initializer '" + name +
                                         "'; expected zeros, ones, glorot_uniform, glorot_normal, "
                                         "he_uniform, he_normal, uniform or orthogonal");
}

std::pair<double, double> Initializer::fans(const std::vector<int64_t>& dims) {
  if (dims.size() < 2) {
    const double n = dims.empty() ? 1.0 : static_cast<double>(dims[0]);
    return {n, n};
  }
  double receptive = 1.0;
  for (size_t i = 0; i + 2 < dims.size(); ++i) receptive *= static_cast<double>(dims[i]);
  return {receptive * static_cast<double>(dims[dims.size() - 2]),
          receptive * static_cast<double>(dims.back())};
}

std::pair<std::string, OpAttrs> Initializer::init_op(const std::vector<int64_t>& dims,
                                                     uint64_t seed) const {
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

std::vector<float> Initializer::host_values(const std::vector<int64_t>& dims, uint64_t seed) const {
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

uint64_t Initializer::splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<float> Initializer::orthogonal_values(int64_t rows, int64_t cols, double gain,
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

}  // namespace dlrt::nn
