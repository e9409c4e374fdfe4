// io/io_test_util.hpp: helpers of the io tests — a temp folder removed at the end, files
// written and read back as bytes, gzip compression through zlib, and status checks.
#pragma once

#include <dlrt/dlrt.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace dlrt::io_test {

using Bytes = std::string;

// A fresh folder under the test temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "dlrt_io_XXXXXX";
    char* made = mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }
  // Names of every entry in the folder, for "no temp file is left behind".
  std::vector<std::string> list() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::string path_;
};

inline void write_file(const std::string& path, const Bytes& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// `bytes` as one gzip member (zlib's deflate with the gzip wrapper).
inline Bytes gzip(const Bytes& bytes, int level = 6) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes out(deflateBound(&zs, bytes.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// Big-endian u32, as IDX writes its dims.
inline Bytes be32(uint32_t v) {
  return Bytes{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
               static_cast<char>(v)};
}

// An IDX header: magic 00 00 type rank, then the dims.
inline Bytes idx_header(uint8_t type, std::initializer_list<uint32_t> dims) {
  Bytes out{'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims) out += be32(d);
  return out;
}

// The code and message of a status, freeing it. {DLRT_OK, ""} for NULL.
struct Result {
  dlrt_code code = DLRT_OK;
  std::string message;
};
inline Result take(dlrt_status* s) {
  Result r;
  if (s != nullptr) {
    r.code = dlrt_status_code(s);
    r.message = dlrt_status_message(s);
    dlrt_status_free(s);
  }
  return r;
}

}  // namespace dlrt::io_test
