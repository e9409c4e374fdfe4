// io/idx.hpp: the IDX file reader (the format of MNIST and Fashion-MNIST), plain or gzipped.
//
// IDX is a 4-byte magic 0x0000TTRR (TT the element type, RR the rank), RR big-endian u32
// dims, then the elements row-major, multi-byte types big-endian:
//   0x08 u8   0x09 i8   0x0B i16 (no dlrt dtype: UNIMPLEMENTED)   0x0C i32   0x0D f32   0x0E f64
// e.g. train-images-idx3-ubyte: 00 00 08 03 | 60000 | 28 | 28 | 47040000 bytes.
//
// What it is: a strict reader. Every malformed file is a DATA_LOSS error saying what was
// wrong and what was expected (bad magic, rank 0, a dims product that overflows, data shorter
// or longer than the header says, a truncated or corrupt gzip stream). A file whose first two
// bytes are the gzip magic 1f 8b is decompressed through zlib as it is read; the buffer only
// grows as decompressed bytes arrive and never past what the header describes, so a small
// gzip "bomb" cannot exhaust memory (the excess is counted, then reported as trailing bytes).
// Limits: read_idx(path, max_rows) reads only the first max_rows rows along dims[0] (and
// allocates only for them), and no reader call allocates more than kIdxMaxBytes
// (DLRT_IDX_MAX_BYTES, 4 GiB) or more than the file really holds: a header claiming more is
// RESOURCE_EXHAUSTED naming the size and the limit, before anything is allocated.
// What it is not: a writer, or a memory-mapped reader — the data is read into one buffer.
#pragma once

#include <dlrt/dlrt.h>
#include <dlrt/types.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace dlrt::core::io {

struct FreeDeleter {
  void operator()(void* p) const noexcept { std::free(p); }
};
// A malloc'd buffer: the C API hands it to the caller's dlrt_idx_array, and dlrt_idx_free
// frees it with free().
using MallocBuffer = std::unique_ptr<uint8_t, FreeDeleter>;

// One IDX array, its elements converted to host byte order.
struct IdxArray {
  dlrt_dtype dtype = DLRT_DTYPE_INVALID;
  std::vector<int64_t> dims;  // 1..DLRT_MAX_RANK entries, each 0..2^32-1
  MallocBuffer data;          // `bytes` bytes, row-major, malloc-aligned; non-NULL
  size_t bytes = 0;           // element size × the product of dims
};

// The most bytes one IDX read allocates for its data (what a header may claim, after the row
// limit): 4 GiB, 90 times Fashion-MNIST's training images.
inline constexpr uint64_t kIdxMaxBytes = DLRT_IDX_MAX_BYTES;

// Reads the IDX file at `path` (gzip detected by its magic). NOT_FOUND when it does not
// exist; INVALID_ARGUMENT when it is not a regular file; DATA_LOSS for a malformed file;
// UNIMPLEMENTED for i16 or rank > DLRT_MAX_RANK; RESOURCE_EXHAUSTED above kIdxMaxBytes.
// max_rows > 0: only the first max_rows rows of dims[0] (dims[0] comes back as
// min(dims[0], max_rows)); the rest of a plain file is size-checked but not read.
IdxArray read_idx(const std::string& path, uint64_t max_rows = 0);

// The same parser over bytes in memory (the fuzz targets' entry point). Messages name the
// source as "<memory>".
IdxArray parse_idx(const uint8_t* bytes, size_t size, uint64_t max_rows = 0);

}  // namespace dlrt::core::io
