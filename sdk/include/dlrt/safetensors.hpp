// dlrt/safetensors.hpp: safetensors checkpoints, read (SafeTensors::open, every tensor's bytes
// in memory) and written atomically (write_safetensors) (dlrt.h "Data files and checkpoints").
#ifndef DLRT_SAFETENSORS_HPP_
#define DLRT_SAFETENSORS_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dlrt/error.hpp"

namespace dlrt {

// A tensor of a safetensors file: a view (data and name point into the SafeTensors that made
// it, valid while that lives), or a tensor to write (data caller-owned).
struct SafeTensorView {
  std::string name;
  dlrt_dtype dtype = DLRT_DTYPE_INVALID;
  std::vector<int64_t> dims;
  const void* data = nullptr;
  size_t bytes = 0;
};

// An opened safetensors file (owner; move-only), every tensor's bytes in memory.
//   dlrt::SafeTensors ckpt = dlrt::SafeTensors::open("model.safetensors");
//   for (const auto& t : ckpt.entries()) ...;  ckpt.metadata("step")
class SafeTensors {
 public:
  static SafeTensors open(const std::string& path) {
    dlrt_safetensors* raw = nullptr;
    check(dlrt_safetensors_open(path.c_str(), &raw));
    return SafeTensors(raw);
  }

  size_t size() const { return dlrt_safetensors_count(get()); }
  SafeTensorView entry(size_t index) const {
    dlrt_safetensors_entry e{};
    e.struct_size = DLRT_STRUCT_SIZE(dlrt_safetensors_entry);
    check(dlrt_safetensors_get(get(), index, &e));
    return SafeTensorView{detail::str(e.name), static_cast<dlrt_dtype>(e.dtype),
                          std::vector<int64_t>(e.dims, e.dims + e.rank), e.data, e.bytes};
  }
  std::vector<SafeTensorView> entries() const {
    std::vector<SafeTensorView> out;
    for (size_t i = 0; i < size(); ++i) out.push_back(entry(i));
    return out;
  }
  // The index of tensor `name`, or nullopt.
  std::optional<size_t> find(const std::string& name) const {
    size_t index = 0;
    dlrt_status* s = dlrt_safetensors_find(get(), name.c_str(), &index);
    if (s != nullptr && dlrt_status_code(s) == DLRT_NOT_FOUND) {
      dlrt_status_free(s);
      return std::nullopt;
    }
    check(s);
    return index;
  }
  // Tensor `name`; throws Error (NOT_FOUND) when there is none.
  SafeTensorView at(const std::string& name) const {
    size_t index = 0;
    check(dlrt_safetensors_find(get(), name.c_str(), &index));
    return entry(index);
  }
  std::optional<std::string> metadata(const std::string& key) const {
    const char* v = dlrt_safetensors_metadata(get(), key.c_str());
    return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
  }
  // Every metadata pair, in header order.
  std::vector<std::pair<std::string, std::string>> metadata() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (size_t i = 0; i < dlrt_safetensors_metadata_count(get()); ++i) {
      std::string key = detail::str(dlrt_safetensors_metadata_key(get(), i));
      out.emplace_back(key, detail::str(dlrt_safetensors_metadata(get(), key.c_str())));
    }
    return out;
  }
  dlrt_safetensors* get() const { return handle_.get(); }

 private:
  explicit SafeTensors(dlrt_safetensors* raw) : handle_(raw) {}
  detail::Owner<dlrt_safetensors> handle_;
};

// Write `tensors` (in this order) and `metadata` to `path`, atomically (dlrt_safetensors_write).
inline void write_safetensors(
    const std::string& path, const std::vector<SafeTensorView>& tensors,
    const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
  std::vector<dlrt_safetensors_entry> entries(tensors.size());
  std::vector<const dlrt_safetensors_entry*> ptrs(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SafeTensorView& t = tensors[i];
    if (t.dims.size() > DLRT_MAX_RANK)
      throw Error(DLRT_INVALID_ARGUMENT, "tensor \"" + t.name + "\": rank " +
                                             std::to_string(t.dims.size()) +
                                             " is over DLRT_MAX_RANK");
    dlrt_safetensors_entry& e = entries[i];
    e = dlrt_safetensors_entry{};
    e.struct_size = DLRT_STRUCT_SIZE(dlrt_safetensors_entry);
    e.name = t.name.c_str();
    e.dtype = t.dtype;
    e.rank = static_cast<int32_t>(t.dims.size());
    for (size_t d = 0; d < t.dims.size(); ++d) e.dims[d] = t.dims[d];
    e.data = t.data;
    e.bytes = t.bytes;
    ptrs[i] = &e;
  }
  std::vector<const char*> keys, values;
  for (const auto& kv : metadata) {
    keys.push_back(kv.first.c_str());
    values.push_back(kv.second.c_str());
  }
  check(dlrt_safetensors_write(path.c_str(), ptrs.empty() ? nullptr : ptrs.data(), ptrs.size(),
                               keys.empty() ? nullptr : keys.data(),
                               values.empty() ? nullptr : values.data(), keys.size()));
}

}  // namespace dlrt

#endif  // DLRT_SAFETENSORS_HPP_
