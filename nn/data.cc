// data.cc: Array, host data for fit (dlrt/nn/data.hpp).
#include "dlrt/nn/data.hpp"

namespace dlrt::nn {

std::string shape_string(const Shape& s) {
  std::string out = "(None";
  for (int64_t d : s) out += ", " + std::to_string(d);
  return out + ")";
}

std::string dims_string(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

int64_t element_count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Array::Array(dlrt_dtype dtype, std::vector<int64_t> dims, std::vector<uint8_t> bytes)
    : dtype_(dtype), dims_(std::move(dims)), bytes_(std::move(bytes)) {
  if (dims_.empty())
    throw Error(DLRT_INVALID_ARGUMENT, "Array: needs at least one dim (the sample count)");
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d < 1) throw Error(DLRT_INVALID_ARGUMENT, "Array: every dim must be >= 1");
    n *= d;
  }
  if (dtype_size(dtype_) == 0)
    throw Error(DLRT_INVALID_ARGUMENT, "Array: unsupported dtype " + dtype_name(dtype_));
  if (bytes_.size() != static_cast<size_t>(n) * dtype_size(dtype_))
    throw Error(DLRT_INVALID_ARGUMENT,
                "Array: " + std::to_string(bytes_.size()) + " bytes given, dims and dtype need " +
                    std::to_string(static_cast<size_t>(n) * dtype_size(dtype_)));
}

Array Array::head(int64_t n) const {
  if (n >= rows()) return *this;
  if (n < 1) throw Error(DLRT_INVALID_ARGUMENT, "Array::head: n must be >= 1");
  std::vector<int64_t> d = dims_;
  d[0] = n;
  return Array(dtype_, d, std::vector<uint8_t>(bytes_.begin(), bytes_.begin() + n * row_bytes()));
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t derive_seed(uint64_t model_seed, const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return splitmix64(model_seed ^ splitmix64(h)) >> 1;
}

std::vector<int32_t> epoch_order(uint64_t seed, int64_t epoch, int64_t n, bool shuffle) {
  std::vector<int32_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  if (!shuffle) return order;
  uint64_t state = splitmix64(seed ^ splitmix64(0x5eed0000ull + static_cast<uint64_t>(epoch)));
  for (int64_t i = n - 1; i > 0; --i) {
    state = splitmix64(state);
    // Unbiased enough for i < 2^32: the modulo bias of a 64-bit draw is below 2^-32.
    const int64_t j = static_cast<int64_t>(state % static_cast<uint64_t>(i + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

}  // namespace dlrt::nn
