// dlrt/nn/data.hpp: host arrays handed to fit/evaluate/predict, the seeded epoch order, and
// the seed derivation every other part of nn uses (bodies in nn/data.cc); no C calls.
//
// What it is: `Array` is a NumPy-like host array (dtype, dims, bytes) whose first dim counts
// samples: images (N,H,W,C) as u8 (scaled by 1/255 on the device) or f32 (used as given),
// class labels (N) as i32, regression targets (N,...) as f32. `epoch_order` is the shuffle of
// one epoch as a pure function of (seed, epoch), so resuming at epoch k replays exactly the
// batches an uninterrupted run would have seen.
// What it is not: a loader (dlrt::read_idx reads IDX files) or a device buffer — fit uploads
// the training set once into device variables (model.hpp says how).
#ifndef DLRT_NN_DATA_HPP_
#define DLRT_NN_DATA_HPP_

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"

namespace dlrt::nn {

using Shape = std::vector<int64_t>;  // dims without the batch dim, e.g. {28, 28, 1}

// "(None, 26, 26, 32)": Keras' way of printing a batched shape.
std::string shape_string(const Shape& s);

// "(3, 3, 1, 32)": an unbatched shape (a variable's), "()" for a scalar.
std::string dims_string(const Shape& s);

int64_t element_count(const Shape& s);

// Bytes per element; 0 for a value that is not a dtype (types.h's dlrt_dtype_size).
inline size_t dtype_size(dlrt_dtype t) { return dlrt_dtype_size(t); }

// A host array: `dims[0]` samples of shape dims[1:], row-major bytes. Copyable (it is data).
class Array {
 public:
  Array() = default;
  Array(dlrt_dtype dtype, std::vector<int64_t> dims, std::vector<uint8_t> bytes);
  // Typed constructors: Array::of<float>({N, 4}, values).
  template <typename T>
  static Array of(std::vector<int64_t> dims, const std::vector<T>& values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(T));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return Array(dlrt::detail::CDtype<T>::value, std::move(dims), std::move(bytes));
  }

  dlrt_dtype dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t rows() const { return dims_.empty() ? 0 : dims_[0]; }
  Shape sample_shape() const { return Shape(dims_.begin() + (dims_.empty() ? 0 : 1), dims_.end()); }
  size_t row_bytes() const { return rows() > 0 ? bytes_.size() / static_cast<size_t>(rows()) : 0; }
  const uint8_t* data() const { return bytes_.data(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  bool empty() const { return dims_.empty(); }

  template <typename T>
  std::vector<T> values() const {
    if (dlrt::detail::CDtype<T>::value != dtype_)
      throw Error(DLRT_INVALID_ARGUMENT, "Array::values: the array holds " + dtype_name(dtype_));
    std::vector<T> out(bytes_.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes_.data(), bytes_.size());
    return out;
  }

  // The first `n` samples (all of them when n >= rows()); e.g. --limit.
  Array head(int64_t n) const;

 private:
  dlrt_dtype dtype_ = DLRT_DTYPE_INVALID;
  std::vector<int64_t> dims_;
  std::vector<uint8_t> bytes_;
};

// ---- seeds --------------------------------------------------------------------------------
// splitmix64: a fixed, portable mixer (std::shuffle and the std distributions are not the same
// on every standard library, so nothing here uses them).
uint64_t splitmix64(uint64_t x);

// The seed of one named thing (a variable "conv2d/kernel", a dropout layer) under the model
// seed: a hash of the name mixed with the seed. Names, not creation order, so rebuilding a
// graph or adding a layer elsewhere keeps every other variable's initial value. Kept below
// 2^63 so it survives the int attribute it travels in.
uint64_t derive_seed(uint64_t model_seed, const std::string& name);

// The sample order of epoch `epoch` (0-based): 0..n-1, Fisher-Yates shuffled by a generator
// keyed by (seed, epoch) when `shuffle`. A pure function: the same arguments give the same
// order in every process.
std::vector<int32_t> epoch_order(uint64_t seed, int64_t epoch, int64_t n, bool shuffle);

}  // namespace dlrt::nn

#endif  // DLRT_NN_DATA_HPP_
