// io/byte_source.hpp: sequential byte streams for the readers — a file, bytes in memory, or
// a gzip stream decompressed (through zlib) from either — so one parser serves files on disk
// and the fuzz targets' in-memory inputs.
//
// read(dst, n) returns n bytes, or fewer only at the end of the stream. Malformed input is a
// core::Error (DATA_LOSS) naming the source: a gzip stream that stops before its end marker
// ("truncated gzip stream"), corrupt deflate data, bytes after the end of the gzip stream.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "io/file_util.hpp"

namespace dlrt::core::io {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual size_t read(void* dst, size_t n) = 0;
  // Bytes left to read, when known without reading them (files and memory; not gzip).
  virtual std::optional<uint64_t> remaining() const = 0;
};

class FileSource final : public ByteSource {
 public:
  explicit FileSource(File& file) : file_(file), left_(file.size()) {}
  size_t read(void* dst, size_t n) override;
  std::optional<uint64_t> remaining() const override { return left_; }

 private:
  File& file_;
  uint64_t left_;
};

class MemorySource final : public ByteSource {
 public:
  MemorySource(const uint8_t* bytes, size_t size) : p_(bytes), left_(size) {}
  size_t read(void* dst, size_t n) override;
  std::optional<uint64_t> remaining() const override { return left_; }

 private:
  const uint8_t* p_;
  size_t left_;
};

// Decompresses one gzip member read from `raw`. `name` prefixes error messages.
class GzipSource final : public ByteSource {
 public:
  GzipSource(ByteSource& raw, std::string name);
  ~GzipSource() override;
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  size_t read(void* dst, size_t n) override;
  std::optional<uint64_t> remaining() const override { return std::nullopt; }

 private:
  void check_nothing_after_end();

  ByteSource& raw_;
  std::string name_;
  z_stream zs_{};
  bool raw_eof_ = false;
  bool ended_ = false;
  uint64_t total_out_ = 0;
  unsigned char in_[64 * 1024];
};

// True when `bytes` (at least 2 of them) begin with the gzip magic 1f 8b.
inline bool is_gzip_magic(const uint8_t* bytes, size_t size) {
  return size >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

}  // namespace dlrt::core::io
