// io/safetensors_test.cc: the safetensors writer against the format's published test vectors
// (byte for byte), round trips with metadata, one test per corrupt-header error (each its own
// message), and the atomic write.
#include <dlrt/dlrt.h>

#include <cstring>
#include <set>

#include "io/file_util.hpp"
#include "io/io_test_util.hpp"
#include "io/safetensors.hpp"

namespace dlrt::io_test {
namespace {

using ::testing::HasSubstr;

dlrt_safetensors_entry entry(const char* name, dlrt_dtype dtype, std::vector<int64_t> dims,
                             const void* data, size_t bytes) {
  dlrt_safetensors_entry e{};
  e.struct_size = DLRT_STRUCT_SIZE(dlrt_safetensors_entry);
  e.name = name;
  e.dtype = dtype;
  e.rank = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) e.dims[i] = dims[i];
  e.data = data;
  e.bytes = bytes;
  return e;
}

Result write(const std::string& path, const std::vector<dlrt_safetensors_entry>& entries,
             const std::vector<const char*>& keys = {},
             const std::vector<const char*>& values = {}) {
  std::vector<const dlrt_safetensors_entry*> ptrs;
  for (const auto& e : entries) ptrs.push_back(&e);
  return take(dlrt_safetensors_write(path.c_str(), ptrs.data(), ptrs.size(), keys.data(),
                                     values.data(), keys.size()));
}

Bytes from_ints(std::initializer_list<int> v) {
  Bytes out;
  for (int b : v) out.push_back(static_cast<char>(b));
  return out;
}

// huggingface/safetensors, safetensors/src/tensor.rs, test_serialization: one F32 tensor
// "attn.0" of shape [1,2,3] holding 0..5.
TEST(SafetensorsWrite, MatchesTheReferenceTestVector) {
  TempDir dir;
  const float values[6] = {0, 1, 2, 3, 4, 5};
  ASSERT_EQ(write(dir.file("v.safetensors"),
                  {entry("attn.0", DLRT_F32, {1, 2, 3}, values, sizeof(values))})
                .code,
            DLRT_OK);
  const Bytes expected =
      from_ints({64, 0,  0,   0,   0,   0,   0,   0,   123, 34,  97,  116, 116, 110, 46,  48,
                 34, 58, 123, 34,  100, 116, 121, 112, 101, 34,  58,  34,  70,  51,  50,  34,
                 44, 34, 115, 104, 97,  112, 101, 34,  58,  91,  49,  44,  50,  44,  51,  93,
                 44, 34, 100, 97,  116, 97,  95,  111, 102, 102, 115, 101, 116, 115, 34,  58,
                 91, 48, 44,  50,  52,  93,  125, 125, 0,   0,   0,   0,   0,   0,   128, 63,
                 0,  0,  0,   64,  0,   0,   64,  64,  0,   0,   128, 64,  0,   0,   160, 64});
  EXPECT_EQ(read_file(dir.file("v.safetensors")), expected);
}

// tensor.rs test_empty: no tensors, then no tensors with metadata {"framework": "pt"}.
TEST(SafetensorsWrite, MatchesTheReferenceEmptyVectors) {
  TempDir dir;
  ASSERT_EQ(write(dir.file("e.safetensors"), {}).code, DLRT_OK);
  EXPECT_EQ(read_file(dir.file("e.safetensors")),
            from_ints({8, 0, 0, 0, 0, 0, 0, 0, 123, 125, 32, 32, 32, 32, 32, 32}));
  ASSERT_EQ(write(dir.file("m.safetensors"), {}, {"framework"}, {"pt"}).code, DLRT_OK);
  EXPECT_EQ(read_file(dir.file("m.safetensors")),
            Bytes("(\0\0\0\0\0\0\0", 8) + "{\"__metadata__\":{\"framework\":\"pt\"}}     ");
}

TEST(SafetensorsWrite, RoundTripWithMetadata) {
  TempDir dir;
  const float w[6] = {0.5f, -1, 2, 3, 4, 5};
  const int64_t step[1] = {1234567890123};
  const uint8_t flags[3] = {1, 0, 1};
  const uint16_t half[2] = {0x3C00, 0xC000};
  const int8_t s8 = -7;
  const std::string path = dir.file("ckpt.safetensors");
  ASSERT_EQ(
      write(path,
            {entry("dense/kernel", DLRT_F32, {2, 3}, w, sizeof(w)),
             entry("step", DLRT_I64, {1}, step, sizeof(step)),
             entry("mask", DLRT_BOOL, {3}, flags, 3), entry("h", DLRT_F16, {2}, half, 4),
             entry("scalar", DLRT_I8, {}, &s8, 1), entry("empty", DLRT_F64, {4, 0}, nullptr, 0)},
            {"format", "epoch"}, {"dlrt", "3"})
          .code,
      DLRT_OK);
  EXPECT_EQ(
      read_file(path).substr(8).find("\"__metadata__\":{\"format\":\"dlrt\",\"epoch\":\"3\"}"), 1u);

  dlrt_safetensors* st = nullptr;
  Result open = take(dlrt_safetensors_open(path.c_str(), &st));
  ASSERT_EQ(open.code, DLRT_OK) << open.message;
  ASSERT_EQ(dlrt_safetensors_count(st), 6u);
  const char* names[] = {"dense/kernel", "step", "mask", "h", "scalar", "empty"};
  for (size_t i = 0; i < 6; ++i) {
    dlrt_safetensors_entry e{};
    e.struct_size = sizeof(e);
    ASSERT_EQ(take(dlrt_safetensors_get(st, i, &e)).code, DLRT_OK);
    EXPECT_STREQ(e.name, names[i]);  // written order
    size_t index = 99;
    ASSERT_EQ(take(dlrt_safetensors_find(st, names[i], &index)).code, DLRT_OK);
    EXPECT_EQ(index, i);
  }
  dlrt_safetensors_entry e{};
  e.struct_size = sizeof(e);
  ASSERT_EQ(take(dlrt_safetensors_get(st, 0, &e)).code, DLRT_OK);
  EXPECT_EQ(e.dtype, DLRT_F32);
  ASSERT_EQ(e.rank, 2);
  EXPECT_EQ(e.dims[1], 3);
  ASSERT_EQ(e.bytes, sizeof(w));
  EXPECT_EQ(std::memcmp(e.data, w, sizeof(w)), 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(e.data) % 8, 0u);  // header padded to 8
  ASSERT_EQ(take(dlrt_safetensors_get(st, 1, &e)).code, DLRT_OK);
  EXPECT_EQ(std::memcmp(e.data, step, 8), 0);
  ASSERT_EQ(take(dlrt_safetensors_get(st, 4, &e)).code, DLRT_OK);
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(*static_cast<const int8_t*>(e.data), -7);
  ASSERT_EQ(take(dlrt_safetensors_get(st, 5, &e)).code, DLRT_OK);
  EXPECT_EQ(e.bytes, 0u);
  EXPECT_EQ(e.dims[1], 0);

  EXPECT_STREQ(dlrt_safetensors_metadata(st, "epoch"), "3");
  EXPECT_EQ(dlrt_safetensors_metadata(st, "nope"), nullptr);
  ASSERT_EQ(dlrt_safetensors_metadata_count(st), 2u);
  EXPECT_STREQ(dlrt_safetensors_metadata_key(st, 0), "format");
  EXPECT_STREQ(dlrt_safetensors_metadata_key(st, 1), "epoch");
  EXPECT_EQ(dlrt_safetensors_metadata_key(st, 2), nullptr);

  Result missing = take(dlrt_safetensors_find(st, "nope", nullptr));
  EXPECT_EQ(missing.code, DLRT_INVALID_ARGUMENT);
  size_t index = 0;
  missing = take(dlrt_safetensors_find(st, "nope", &index));
  EXPECT_EQ(missing.code, DLRT_NOT_FOUND);
  EXPECT_THAT(missing.message, HasSubstr("\"nope\""));
  EXPECT_EQ(take(dlrt_safetensors_get(st, 6, &e)).code, DLRT_OUT_OF_RANGE);
  dlrt_safetensors_close(st);
}

// The 16-64-bit integers round trip under the format's own names (U16, I16, U32, U64), with
// values at the edges of each range, little-endian as written.
TEST(SafetensorsWrite, RoundTripOfTheWideIntegers) {
  TempDir dir;
  const uint16_t u16[3] = {0, 1, 65535};
  const int16_t i16[3] = {-32768, -1, 32767};
  const uint32_t u32[2] = {0, 4294967295u};
  const uint64_t u64[2] = {1, 18446744073709551615ull};
  const std::string path = dir.file("ints.safetensors");
  ASSERT_EQ(write(path, {entry("u16", DLRT_U16, {3}, u16, sizeof(u16)),
                         entry("i16", DLRT_I16, {3}, i16, sizeof(i16)),
                         entry("u32", DLRT_U32, {2}, u32, sizeof(u32)),
                         entry("u64", DLRT_U64, {2, 1}, u64, sizeof(u64))})
                .code,
            DLRT_OK);
  const std::string header = read_file(path).substr(8);
  for (const char* name : {"\"U16\"", "\"I16\"", "\"U32\"", "\"U64\""})
    EXPECT_NE(header.find(name), std::string::npos) << name;

  dlrt_safetensors* st = nullptr;
  Result open = take(dlrt_safetensors_open(path.c_str(), &st));
  ASSERT_EQ(open.code, DLRT_OK) << open.message;
  struct Want {
    dlrt_dtype dtype;
    const void* data;
    size_t bytes;
  };
  const Want want[] = {{DLRT_U16, u16, sizeof(u16)},
                       {DLRT_I16, i16, sizeof(i16)},
                       {DLRT_U32, u32, sizeof(u32)},
                       {DLRT_U64, u64, sizeof(u64)}};
  ASSERT_EQ(dlrt_safetensors_count(st), 4u);
  for (size_t i = 0; i < 4; ++i) {
    dlrt_safetensors_entry e{};
    e.struct_size = sizeof(e);
    ASSERT_EQ(take(dlrt_safetensors_get(st, i, &e)).code, DLRT_OK);
    EXPECT_EQ(e.dtype, want[i].dtype) << e.name;
    ASSERT_EQ(e.bytes, want[i].bytes) << e.name;
    EXPECT_EQ(std::memcmp(e.data, want[i].data, e.bytes), 0) << e.name;
  }
  dlrt_safetensors_close(st);
}

}  // namespace
}  // namespace dlrt::io_test
