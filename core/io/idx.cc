// io/idx.cc: see idx.hpp for the format and the errors.
#include "io/idx.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "io/byte_source.hpp"
#include "status.hpp"

namespace dlrt::core::io {
namespace {

constexpr const char* kExpectedTypes = "08 u8, 09 i8, 0B i16, 0C i32, 0D f32, 0E f64";

struct IdxType {
  dlrt_dtype dtype;
  size_t size;
  const char* name;
};

// The element type of IDX type byte `code` (every type IDX defines); fails for other codes.
IdxType idx_type(uint8_t code, uint32_t magic, const std::string& name) {
  switch (code) {
    case 0x08:
      return {DLRT_U8, 1, "u8"};
    case 0x09:
      return {DLRT_I8, 1, "i8"};
    case 0x0B:
      return {DLRT_I16, 2, "i16"};
    case 0x0C:
      return {DLRT_I32, 4, "i32"};
    case 0x0D:
      return {DLRT_F32, 4, "f32"};
    case 0x0E:
      return {DLRT_F64, 8, "f64"};
    default:
      fail(DLRT_DATA_LOSS,
           fmt::format("{}: bad IDX magic 0x{:08X}: type byte 0x{:02X} is not an IDX type "
                       "(expected one of {})",
                       name, magic, code, kExpectedTypes));
  }
}

size_t read_full(ByteSource& src, void* dst, size_t n) {
  size_t got = 0;
  while (got < n) {
    size_t k = src.read(static_cast<uint8_t*>(dst) + got, n - got);
    if (k == 0) break;
    got += k;
  }
  return got;
}

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// Big-endian elements of `size` bytes to host order, in place.
void to_host_order(uint8_t* data, size_t bytes, size_t size) {
  if (size == 1) return;
  const uint16_t probe = 1;
  uint8_t first;
  std::memcpy(&first, &probe, 1);
  if (first == 0) return;  // a big-endian host already has the file's order
  for (size_t i = 0; i + size <= bytes; i += size) std::reverse(data + i, data + i + size);
}

// "60000×28×28"
std::string dims_text(const std::vector<int64_t>& dims) {
  return fmt::format("{}", fmt::join(dims, "×"));
}

IdxArray parse(ByteSource& src, const std::string& name, bool gzipped, uint64_t max_rows) {
  uint8_t magic_bytes[4];
  size_t got = read_full(src, magic_bytes, 4);
  if (got < 4)
    fail(DLRT_DATA_LOSS, fmt::format("{}: {} bytes long; an IDX file starts with a 4-byte magic "
                                     "0x0000TTRR (TT the type, RR the rank)",
                                     name, got));
  uint32_t magic = be32(magic_bytes);
  if (magic_bytes[0] != 0 || magic_bytes[1] != 0)
    fail(DLRT_DATA_LOSS,
         fmt::format("{}: bad IDX magic 0x{:08X}, expected 0x0000TTRR (TT one of {}; RR the "
                     "rank){}",
                     name, magic, kExpectedTypes,
                     gzipped ? " after gunzip" : "; not gzip either (no 1f 8b magic)"));
  IdxType type = idx_type(magic_bytes[2], magic, name);
  int rank = magic_bytes[3];
  if (rank == 0)
    fail(DLRT_DATA_LOSS, fmt::format("{}: IDX magic 0x{:08X} says rank 0; expected 1..{}", name,
                                     magic, DLRT_MAX_RANK));
  if (rank > DLRT_MAX_RANK)
    fail(DLRT_UNIMPLEMENTED, fmt::format("{}: IDX magic 0x{:08X} says rank {}; dlrt holds at most "
                                         "DLRT_MAX_RANK = {} dims",
                                         name, magic, rank, DLRT_MAX_RANK));

  uint8_t dim_bytes[4 * DLRT_MAX_RANK];
  const size_t header = 4 + 4 * static_cast<size_t>(rank);
  got = read_full(src, dim_bytes, 4 * static_cast<size_t>(rank));
  if (got < 4 * static_cast<size_t>(rank))
    fail(DLRT_DATA_LOSS, fmt::format("{}: header truncated: rank {} needs 4 + 4×{} = {} header "
                                     "bytes, the file has {}",
                                     name, rank, rank, header, 4 + got));

  IdxArray out;
  out.dtype = type.dtype;
  uint64_t count = 1;
  bool overflow = false;
  for (int i = 0; i < rank; ++i) {
    uint32_t d = be32(dim_bytes + 4 * i);
    out.dims.push_back(d);
    overflow = overflow || __builtin_mul_overflow(count, uint64_t{d}, &count);
  }
  uint64_t bytes64 = 0;
  overflow = overflow || __builtin_mul_overflow(count, uint64_t{type.size}, &bytes64) ||
             bytes64 > SIZE_MAX;
  if (overflow)
    fail(DLRT_DATA_LOSS, fmt::format("{}: header dims {} of {} overflow: the data size does not "
                                     "fit in 64 bits",
                                     name, dims_text(out.dims), type.name));
  const size_t bytes = static_cast<size_t>(bytes64);
  std::string says =
      type.size == 1 ? fmt::format("header says {} = {} bytes of data", dims_text(out.dims), bytes)
                     : fmt::format("header says {} {} × {} bytes = {} bytes of data",
                                   dims_text(out.dims), type.name, type.size, bytes);

  // Plain files and memory know their size: check it before allocating anything. (The whole
  // file is checked even when only its first rows are read: it costs nothing.)
  const std::optional<uint64_t> left = src.remaining();
  if (left) {
    if (*left < bytes)
      fail(DLRT_DATA_LOSS,
           fmt::format("{}: {}, file has {} after its {}-byte header", name, says, *left, header));
    if (*left > bytes)
      fail(DLRT_DATA_LOSS, fmt::format("{}: {}, file has {} after its {}-byte header: {} "
                                       "trailing bytes",
                                       name, says, *left, header, *left - bytes));
  }

  // max_rows: only the first rows along dims[0] (mnist_cnn --limit). A row is the product of
  // the other dims; `want` is what is read and allocated.
  const uint64_t rows = static_cast<uint64_t>(out.dims[0]);
  const uint64_t keep_rows = max_rows != 0 ? std::min(rows, max_rows) : rows;
  const size_t want = rows == 0 ? 0 : static_cast<size_t>(bytes / rows * keep_rows);
  if (want > kIdxMaxBytes)
    fail(DLRT_RESOURCE_EXHAUSTED,
         fmt::format("{}: {}{}, more than the IDX reader's limit of {} bytes "
                     "(DLRT_IDX_MAX_BYTES, 4 GiB); read fewer rows (a row limit, e.g. mnist_cnn "
                     "--limit) or split the file",
                     name, says,
                     keep_rows < rows ? fmt::format(" ({} of its {} rows asked for: {} bytes)",
                                                    keep_rows, rows, want)
                                      : "",
                     kIdxMaxBytes));

  // Grow the buffer as bytes arrive (never past `want`): a header that lies about the size
  // of a small gzip stream costs at most twice what the stream really holds.
  size_t capacity = std::min<size_t>(want, size_t{1} << 20);
  uint8_t* buf = static_cast<uint8_t*>(std::malloc(std::max<size_t>(capacity, 1)));
  if (buf == nullptr)
    fail(DLRT_RESOURCE_EXHAUSTED, fmt::format("{}: cannot allocate {} bytes", name, capacity));
  out.data.reset(buf);
  size_t have = 0;
  while (have < want) {
    if (have == capacity) {
      capacity = std::min(want, std::max(capacity * 2, capacity + 1));
      void* grown = std::realloc(out.data.get(), capacity);
      if (grown == nullptr)
        fail(DLRT_RESOURCE_EXHAUSTED,
             fmt::format("{}: cannot allocate {} bytes for {}", name, capacity, says));
      (void)out.data.release();
      out.data.reset(static_cast<uint8_t*>(grown));
    }
    size_t k = read_full(src, out.data.get() + have, capacity - have);
    have += k;
    if (k == 0) break;
  }
  if (have < want)
    fail(DLRT_DATA_LOSS, fmt::format("{}: {}, file has {} after its {}-byte header{}", name, says,
                                     have, header, gzipped ? " (decompressed)" : ""));

  // Anything after the data is an error. Count it (up to 64 MiB, so a gzip bomb is cut short).
  // With a row limit the rest is not read: a plain file's size was checked above; the tail of
  // a gzip stream goes unchecked (checking it would mean decompressing all of it).
  uint64_t extra = 0;
  uint8_t scratch[16 * 1024];
  constexpr uint64_t kCountLimit = uint64_t{64} << 20;
  while (keep_rows == rows && extra < kCountLimit) {
    size_t k = src.read(scratch, sizeof(scratch));
    if (k == 0) break;
    extra += k;
  }
  if (extra > 0)
    fail(
        DLRT_DATA_LOSS,
        fmt::format("{0}: {1}, file has {2}{3} after its {4}-byte header{5}: {2}{6} trailing bytes",
                    name, says, extra >= kCountLimit ? "at least " : "", bytes + extra, header,
                    gzipped ? " (decompressed)" : "", extra));

  out.dims[0] = static_cast<int64_t>(keep_rows);
  to_host_order(out.data.get(), want, type.size);
  out.bytes = want;
  return out;
}

}  // namespace

IdxArray read_idx(const std::string& path, uint64_t max_rows) {
  File file(path);
  uint8_t head[2] = {0, 0};
  size_t got = file.read(head, 2);
  // Rewind: the parser reads the magic itself.
  if (std::fseek(file.get(), 0, SEEK_SET) != 0)
    throw errno_error(errno, fmt::format("cannot seek in '{}'", path));
  FileSource raw(file);
  if (is_gzip_magic(head, got)) {
    GzipSource gz(raw, path);
    return parse(gz, path, true, max_rows);
  }
  return parse(raw, path, false, max_rows);
}

IdxArray parse_idx(const uint8_t* bytes, size_t size, uint64_t max_rows) {
  const std::string name = "<memory>";
  MemorySource raw(bytes, size);
  if (is_gzip_magic(bytes, size)) {
    GzipSource gz(raw, name);
    return parse(gz, name, true, max_rows);
  }
  return parse(raw, name, false, max_rows);
}

}  // namespace dlrt::core::io
