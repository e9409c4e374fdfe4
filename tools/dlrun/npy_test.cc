// npy_test.cc: the .npy reader and writer (npy.hpp) round trip every dtype NumPy and dlrt
// share, name the dtype in the header as NumPy spells it, and refuse a dtype dlrt lacks by
// naming the ones it reads.
#include "npy.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include <unistd.h>

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("dlrt_npy_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

template <typename T>
dlrt::npy::Array array_of(dlrt_dtype dtype, std::vector<int64_t> dims, std::vector<T> values) {
  dlrt::npy::Array a;
  a.dtype = dtype;
  a.dims = std::move(dims);
  a.bytes.resize(values.size() * sizeof(T));
  std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

TEST(Npy, EveryDtypeRoundTripsUnderNumPysName) {
  struct Case {
    dlrt::npy::Array a;
    const char* descr;
  };
  const Case cases[] = {
      {array_of<float>(DLRT_F32, {2}, {1.5f, -2}), "<f4"},
      {array_of<double>(DLRT_F64, {1}, {0.25}), "<f8"},
      {array_of<uint16_t>(DLRT_F16, {1}, {0x3C00}), "<f2"},
      {array_of<int32_t>(DLRT_I32, {2, 1}, {-7, 7}), "<i4"},
      {array_of<int64_t>(DLRT_I64, {}, {int64_t{1} << 40}), "<i8"},
      {array_of<uint8_t>(DLRT_U8, {3}, {0, 128, 255}), "|u1"},
      {array_of<int8_t>(DLRT_I8, {1}, {-128}), "|i1"},
      {array_of<uint8_t>(DLRT_BOOL, {2}, {1, 0}), "|b1"},
      {array_of<uint16_t>(DLRT_U16, {3}, {0, 1, 65535}), "<u2"},
      {array_of<int16_t>(DLRT_I16, {1, 3}, {-32768, -1, 32767}), "<i2"},
      {array_of<uint32_t>(DLRT_U32, {2}, {0, 4294967295u}), "<u4"},
      {array_of<uint64_t>(DLRT_U64, {2}, {1, 18446744073709551615ull}), "<u8"},
  };
  for (const Case& c : cases) {
    const std::string path = temp_path(c.descr + 1);
    EXPECT_EQ(dlrt::npy::descr_of(c.a.dtype), c.descr);
    dlrt::npy::write(path, c.a);
    // NumPy's header: the dict names the dtype and the whole preamble is a multiple of 64.
    const std::string file = read_all(path);
    EXPECT_NE(file.find(std::string("'descr': '") + c.descr + "'"), std::string::npos) << file;
    EXPECT_EQ((file.size() - c.a.bytes.size()) % 64, 0u) << c.descr;
    const dlrt::npy::Array back = dlrt::npy::read(path);
    EXPECT_EQ(back.dtype, c.a.dtype) << c.descr;
    EXPECT_EQ(back.dims, c.a.dims) << c.descr;
    EXPECT_EQ(back.bytes, c.a.bytes) << c.descr;
    std::remove(path.c_str());
  }
}

TEST(Npy, ADtypeDlrtLacksIsRefusedNamingTheOnesItReads) {
  // A big-endian u2 array: NumPy writes '>u2' on request; dlrt reads little-endian only.
  const std::string path = temp_path("big_endian");
  dlrt::npy::write(path, array_of<uint16_t>(DLRT_U16, {1}, {1}));
  std::string file = read_all(path);
  file.replace(file.find("<u2"), 3, ">u2");
  std::ofstream(path, std::ios::binary) << file;
  try {
    dlrt::npy::read(path);
    FAIL() << "read a '>u2' array";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("dtype '>u2' has no dlrt dtype"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("<u2"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

}  // namespace
