// io/safetensors.hpp: the safetensors checkpoint format (Hugging Face's), read and written.
//
// The format, byte by byte:
//   [8 bytes]  N, the header length, unsigned little-endian
//   [N bytes]  a UTF-8 JSON object, padded with spaces (our writer pads N to a multiple of 8,
//              so the data section starts 8-aligned):
//                {"__metadata__": {"key": "value", ...},            (optional, strings only)
//                 "<tensor name>": {"dtype": "F32", "shape": [1,2,3], "data_offsets": [0,24]},
//                 ...}
//   [rest]     the data section: each tensor's bytes, row-major, little-endian, at
//              [begin, end) of data_offsets, relative to the start of the data section.
// The offsets tile the data section exactly: sorted by begin they start at 0, each begins
// where the previous ends, the last ends at the end of the file.
// dtypes: F32, F16, BF16, F64, I32, I64, U8, I8, BOOL (dlrt's dtypes). The format's other
// dtypes (I16, U16, U32, U64, F8_*, ...) are UNIMPLEMENTED naming the dtype; a string that is
// no safetensors dtype at all is DATA_LOSS.
//
// What it is: a strict reader (every header field is checked, each problem its own DATA_LOSS
// message naming the tensor and the field) and an atomic writer whose output equals the
// reference implementation's byte for byte for the same tensors in the same order.
// What it is not: a lazy or memory-mapped loader: open reads the whole file.
#pragma once

#include <dlrt/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "io/idx.hpp"  // MallocBuffer

namespace dlrt::core::io {

// The reference implementation's limit on the header length.
constexpr uint64_t kSafetensorsMaxHeader = 100'000'000;

struct SafetensorsEntry {
  std::string name;
  dlrt_dtype dtype = DLRT_DTYPE_INVALID;
  std::vector<int64_t> dims;  // 0..DLRT_MAX_RANK entries, each >= 0
  uint64_t begin = 0;         // data_offsets, relative to the data section
  uint64_t end = 0;
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  // in data order (sorted by begin, stable)
  std::vector<std::pair<std::string, std::string>> metadata;  // in header order
  uint64_t data_start = 0;  // 8 + N: where the data section begins in the file
  uint64_t data_bytes = 0;  // its length (== the last entry's end)
};

// Validates a header. `head` holds the file's first `head_size` bytes: all of it, or at
// least the 8 + N header bytes; `file_size` is the whole file's size. `name` prefixes the
// messages (a path, or "<memory>").
SafetensorsHeader parse_safetensors_header(const uint8_t* head, size_t head_size,
                                           uint64_t file_size, const std::string& name);

// A whole file in memory (the fuzz target's entry point).
inline SafetensorsHeader parse_safetensors(const uint8_t* bytes, size_t size) {
  return parse_safetensors_header(bytes, size, size, "<memory>");
}

// An opened, validated file: its header, and its data section in one malloc'd (16-aligned)
// buffer, so each tensor's data is aligned as well as its offset allows.
class SafetensorsFile {
 public:
  static std::unique_ptr<SafetensorsFile> open(const std::string& path);

  const SafetensorsHeader& header() const { return header_; }
  const uint8_t* data(size_t index) const { return data_.get() + header_.entries[index].begin; }
  // The entry's index; -1 when there is none.
  int64_t find(const std::string& name) const;
  // The metadata value, or NULL.
  const std::string* metadata(const std::string& key) const;

 private:
  SafetensorsHeader header_;
  MallocBuffer data_;
  std::unordered_map<std::string, size_t> by_name_;
};

// One tensor to write. `data` holds `bytes` bytes (== element size × product of dims).
struct SafetensorsTensor {
  std::string name;
  dlrt_dtype dtype = DLRT_DTYPE_INVALID;
  std::vector<int64_t> dims;
  const void* data = nullptr;
  size_t bytes = 0;
};

// The 8-byte length plus the padded JSON header for `tensors` in this order (offsets
// contiguous from 0). Validates the tensors and metadata: INVALID_ARGUMENT naming the tensor
// (duplicate or reserved name, bad dtype, dims, rank, or a byte count that disagrees).
std::string safetensors_header_bytes(
    const std::vector<SafetensorsTensor>& tensors,
    const std::vector<std::pair<std::string, std::string>>& metadata);

// Writes `path` atomically (see AtomicFileWriter): the header, then each tensor's bytes.
void write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata);

// "F32" for DLRT_F32, ...; NULL for a dtype safetensors has no name for here.
const char* safetensors_dtype_name(dlrt_dtype dtype);

}  // namespace dlrt::core::io
