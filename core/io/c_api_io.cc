// io/c_api_io.cc: the data-file and checkpoint section of dlrt.h (dlrt_idx_*,
// dlrt_safetensors_*), over io/idx.hpp and io/safetensors.hpp.
#include <dlrt/dlrt.h>

#include <fmt/format.h>

#include <cstring>

#include "c_api_util.hpp"
#include "io/idx.hpp"
#include "io/png_write.hpp"
#include "io/safetensors.hpp"

// The opaque handle of dlrt.h.
struct dlrt_safetensors {
  std::unique_ptr<dlrt::core::io::SafetensorsFile> file;
};

using dlrt::core::fail;
using dlrt::core::guarded;
using dlrt::core::require;

namespace {

// dlrt_idx_array has no optional fields yet: the caller's struct must hold all of them.
void check_idx_struct(const dlrt_idx_array* out) {
  if (!DLRT_HAS_FIELD(dlrt_idx_array, bytes, out->struct_size))
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("out->struct_size is {}; expected at least {} (set it with "
                     "DLRT_STRUCT_SIZE(dlrt_idx_array))",
                     out->struct_size, sizeof(dlrt_idx_array)));
}

}  // namespace

extern "C" {

DLRT_API dlrt_status* dlrt_idx_read(const char* path, dlrt_idx_array* out) {
  return dlrt_idx_read_rows(path, 0, out);
}

DLRT_API dlrt_status* dlrt_idx_read_rows(const char* path, uint64_t max_rows, dlrt_idx_array* out) {
  return guarded([&] {
    require(out, "out");
    check_idx_struct(out);
    size_t keep = out->struct_size;
    std::memset(reinterpret_cast<unsigned char*>(out) + sizeof(size_t), 0,
                sizeof(dlrt_idx_array) - sizeof(size_t));
    require(path, "path");
    dlrt::core::io::IdxArray a = dlrt::core::io::read_idx(path, max_rows);
    dlrt_idx_array full{};
    full.struct_size = keep;
    full.dtype = a.dtype;
    full.rank = static_cast<int32_t>(a.dims.size());
    for (size_t i = 0; i < a.dims.size(); ++i) full.dims[i] = a.dims[i];
    full.bytes = a.bytes;
    full.data = a.data.release();  // now the caller's, until dlrt_idx_free
    *out = full;
  });
}

DLRT_API void dlrt_idx_free(dlrt_idx_array* array) {
  if (array == nullptr || !DLRT_HAS_FIELD(dlrt_idx_array, bytes, array->struct_size)) return;
  std::free(array->data);
  array->data = nullptr;
  array->bytes = 0;
}

DLRT_API dlrt_status* dlrt_safetensors_open(const char* path, dlrt_safetensors** out_handle) {
  if (out_handle != nullptr) *out_handle = nullptr;
  return guarded([&] {
    require(out_handle, "out_handle");
    require(path, "path");
    auto handle = std::make_unique<dlrt_safetensors>();
    handle->file = dlrt::core::io::SafetensorsFile::open(path);
    *out_handle = handle.release();
  });
}

DLRT_API void dlrt_safetensors_close(dlrt_safetensors* handle) { delete handle; }

DLRT_API size_t dlrt_safetensors_count(const dlrt_safetensors* handle) {
  return handle == nullptr ? 0 : handle->file->header().entries.size();
}

DLRT_API dlrt_status* dlrt_safetensors_get(const dlrt_safetensors* handle, size_t index,
                                           dlrt_safetensors_entry* out) {
  return guarded([&] {
    require(handle, "handle");
    require(out, "out");
    const auto& entries = handle->file->header().entries;
    if (index >= entries.size())
      fail(DLRT_OUT_OF_RANGE, fmt::format("safetensors entry {} out of range: the file has {}",
                                          index, entries.size()));
    const auto& e = entries[index];
    dlrt_safetensors_entry full{};
    full.name = e.name.c_str();
    full.dtype = e.dtype;
    full.rank = static_cast<int32_t>(e.dims.size());
    for (size_t i = 0; i < e.dims.size(); ++i) full.dims[i] = e.dims[i];
    full.data = handle->file->data(index);
    full.bytes = static_cast<size_t>(e.end - e.begin);
    dlrt::core::write_out(out, full, "out");
  });
}

DLRT_API dlrt_status* dlrt_safetensors_find(const dlrt_safetensors* handle, const char* name,
                                            size_t* out_index) {
  if (out_index != nullptr) *out_index = 0;
  return guarded([&] {
    require(handle, "handle");
    require(name, "name");
    require(out_index, "out_index");
    int64_t i = handle->file->find(name);
    if (i < 0)
      fail(DLRT_NOT_FOUND, fmt::format("no tensor named \"{}\" in the safetensors file ({} "
                                       "tensors)",
                                       name, handle->file->header().entries.size()));
    *out_index = static_cast<size_t>(i);
  });
}

DLRT_API const char* dlrt_safetensors_metadata(const dlrt_safetensors* handle, const char* key) {
  if (handle == nullptr || key == nullptr) return nullptr;
  const std::string* v = handle->file->metadata(key);
  return v == nullptr ? nullptr : v->c_str();
}

DLRT_API size_t dlrt_safetensors_metadata_count(const dlrt_safetensors* handle) {
  return handle == nullptr ? 0 : handle->file->header().metadata.size();
}

DLRT_API const char* dlrt_safetensors_metadata_key(const dlrt_safetensors* handle, size_t index) {
  if (handle == nullptr || index >= handle->file->header().metadata.size()) return nullptr;
  return handle->file->header().metadata[index].first.c_str();
}

DLRT_API dlrt_status* dlrt_png_write(const char* path, const uint8_t* pixels, size_t num_bytes,
                                     int64_t height, int64_t width, int32_t channels) {
  return guarded([&] {
    require(path, "path");
    require(pixels, "pixels");
    dlrt::core::io::write_png(path, pixels, num_bytes, height, width, channels);
  });
}

DLRT_API dlrt_status* dlrt_safetensors_write(const char* path,
                                             const dlrt_safetensors_entry* const* entries,
                                             size_t num_entries, const char* const* meta_keys,
                                             const char* const* meta_values, size_t num_meta) {
  return guarded([&] {
    require(path, "path");
    if (num_entries > 0) require(entries, "entries");
    if (num_meta > 0) {
      require(meta_keys, "meta_keys");
      require(meta_values, "meta_values");
    }
    std::vector<dlrt::core::io::SafetensorsTensor> tensors(num_entries);
    for (size_t i = 0; i < num_entries; ++i) {
      const dlrt_safetensors_entry* e = entries[i];
      if (e == nullptr) fail(DLRT_INVALID_ARGUMENT, fmt::format("entries[{}] is NULL", i));
      if (!DLRT_HAS_FIELD(dlrt_safetensors_entry, bytes, e->struct_size))
        fail(DLRT_INVALID_ARGUMENT, fmt::format("entries[{}]->struct_size is {}; set it with "
                                                "DLRT_STRUCT_SIZE(dlrt_safetensors_entry)",
                                                i, e->struct_size));
      if (e->name == nullptr)
        fail(DLRT_INVALID_ARGUMENT, fmt::format("entries[{}]->name is NULL", i));
      if (e->rank < 0 || e->rank > DLRT_MAX_RANK)
        fail(DLRT_INVALID_ARGUMENT, fmt::format("entries[{}] (\"{}\"): rank {} is outside 0..{}", i,
                                                e->name, e->rank, DLRT_MAX_RANK));
      tensors[i].name = e->name;
      // Checked as an int first: an out-of-range value must not become a dlrt_dtype (UB).
      if (dlrt_dtype_size(e->dtype) == 0)
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("entries[{}] (\"{}\"): dtype {} is not a dlrt dtype", i, e->name,
                         e->dtype));
      tensors[i].dtype = static_cast<dlrt_dtype>(e->dtype);
      tensors[i].dims.assign(e->dims, e->dims + e->rank);
      tensors[i].data = e->data;
      tensors[i].bytes = e->bytes;
    }
    std::vector<std::pair<std::string, std::string>> meta(num_meta);
    for (size_t i = 0; i < num_meta; ++i) {
      if (meta_keys[i] == nullptr || meta_values[i] == nullptr)
        fail(DLRT_INVALID_ARGUMENT, fmt::format("metadata pair {} has a NULL key or value", i));
      meta[i] = {meta_keys[i], meta_values[i]};
    }
    dlrt::core::io::write_safetensors(path, tensors, meta);
  });
}

}  // extern "C"
