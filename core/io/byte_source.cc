// io/byte_source.cc: see byte_source.hpp.
#include "io/byte_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstring>

namespace dlrt::core::io {

size_t FileSource::read(void* dst, size_t n) {
  size_t got = file_.read(dst, n);
  left_ -= std::min<uint64_t>(left_, got);
  return got;
}

size_t MemorySource::read(void* dst, size_t n) {
  size_t k = std::min(n, left_);
  if (k > 0) std::memcpy(dst, p_, k);
  p_ += k;
  left_ -= k;
  return k;
}

GzipSource::GzipSource(ByteSource& raw, std::string name) : raw_(raw), name_(std::move(name)) {
  // 15 + 16: a gzip wrapper (not zlib, not raw deflate) with the largest window.
  int rc = inflateInit2(&zs_, 15 + 16);
  if (rc == Z_MEM_ERROR) fail(DLRT_RESOURCE_EXHAUSTED, name_ + ": zlib could not allocate");
  if (rc != Z_OK) fail(DLRT_INTERNAL, fmt::format("{}: inflateInit2 failed ({})", name_, rc));
}

GzipSource::~GzipSource() { inflateEnd(&zs_); }

size_t GzipSource::read(void* dst, size_t n) {
  unsigned char* out = static_cast<unsigned char*>(dst);
  size_t produced = 0;
  while (produced < n && !ended_) {
    if (zs_.avail_in == 0 && !raw_eof_) {
      size_t got = raw_.read(in_, sizeof(in_));
      raw_eof_ = got == 0;
      zs_.next_in = in_;
      zs_.avail_in = static_cast<uInt>(got);
    }
    // avail_out is a uInt: large reads go in 1 GiB steps.
    uInt chunk = static_cast<uInt>(std::min<size_t>(n - produced, size_t{1} << 30));
    zs_.next_out = out + produced;
    zs_.avail_out = chunk;
    int rc = inflate(&zs_, Z_NO_FLUSH);
    produced += chunk - zs_.avail_out;
    switch (rc) {
      case Z_OK:
        break;
      case Z_STREAM_END:
        ended_ = true;
        check_nothing_after_end();
        break;
      case Z_BUF_ERROR:
        // No progress possible: with all the input consumed, the stream stopped early.
        if (raw_eof_ && zs_.avail_in == 0)
          fail(DLRT_DATA_LOSS,
               fmt::format("{}: truncated gzip stream: the compressed data ends after {} "
                           "decompressed bytes, before the gzip end-of-stream marker",
                           name_, total_out_ + produced));
        break;
      case Z_MEM_ERROR:
        fail(DLRT_RESOURCE_EXHAUSTED, name_ + ": zlib ran out of memory while decompressing");
      default:  // Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR
        fail(DLRT_DATA_LOSS,
             fmt::format("{}: corrupt gzip stream after {} decompressed bytes: {}", name_,
                         total_out_ + produced, zs_.msg != nullptr ? zs_.msg : "zlib error"));
    }
  }
  total_out_ += produced;
  return produced;
}

// One gzip member per file: anything after it (a second member, garbage) is an error rather
// than data silently ignored.
void GzipSource::check_nothing_after_end() {
  uint64_t extra = zs_.avail_in;
  zs_.avail_in = 0;
  while (!raw_eof_) {
    size_t got = raw_.read(in_, sizeof(in_));
    raw_eof_ = got == 0;
    extra += got;
  }
  if (extra > 0)
    fail(DLRT_DATA_LOSS,
         fmt::format("{}: {} bytes follow the end of the gzip stream (expected one gzip member "
                     "and nothing after it)",
                     name_, extra));
}

}  // namespace dlrt::core::io
