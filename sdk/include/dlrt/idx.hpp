// dlrt/idx.hpp: IDX files (the MNIST format, gzip or not) read into memory
// (dlrt.h "Data files and checkpoints").
#ifndef DLRT_IDX_HPP_
#define DLRT_IDX_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dlrt/error.hpp"

namespace dlrt {

// An IDX array read into memory (owner; move-only): dtype, dims and host-order bytes.
//   dlrt::IdxArray images = dlrt::read_idx("train-images-idx3-ubyte.gz");
//   images.dims() == {60000, 28, 28}; images.data<uint8_t>()[i]
class IdxArray {
 public:
  IdxArray() = default;
  // max_rows > 0: only the first max_rows rows along dims[0] are read (dlrt_idx_read_rows).
  explicit IdxArray(const std::string& path, uint64_t max_rows = 0) {
    check(dlrt_idx_read_rows(path.c_str(), max_rows, &a_));
  }
  ~IdxArray() { dlrt_idx_free(&a_); }
  IdxArray(IdxArray&& o) noexcept : a_(o.a_) { o.a_ = empty(); }
  IdxArray& operator=(IdxArray&& o) noexcept {
    if (this != &o) {
      dlrt_idx_free(&a_);
      a_ = o.a_;
      o.a_ = empty();
    }
    return *this;
  }
  IdxArray(const IdxArray&) = delete;
  IdxArray& operator=(const IdxArray&) = delete;

  dlrt_dtype dtype() const { return static_cast<dlrt_dtype>(a_.dtype); }
  std::vector<int64_t> dims() const { return std::vector<int64_t>(a_.dims, a_.dims + a_.rank); }
  int64_t num_elements() const {
    int64_t n = 1;
    for (int32_t i = 0; i < a_.rank; ++i) n *= a_.dims[i];
    return n;
  }
  const void* data() const { return a_.data; }
  // The elements as T; T must match dtype() (uint8_t for DLRT_U8, float for DLRT_F32, ...).
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(a_.data);
  }
  size_t bytes() const { return a_.bytes; }
  const dlrt_idx_array& c() const { return a_; }

 private:
  static dlrt_idx_array empty() {
    dlrt_idx_array a{};
    a.struct_size = DLRT_STRUCT_SIZE(dlrt_idx_array);
    return a;
  }
  dlrt_idx_array a_ = empty();
};

inline IdxArray read_idx(const std::string& path, uint64_t max_rows = 0) {
  return IdxArray(path, max_rows);
}

}  // namespace dlrt

#endif  // DLRT_IDX_HPP_
