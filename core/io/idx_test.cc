// io/idx_test.cc: the IDX reader through dlrt_idx_read, on small files each test writes
// (plain and gzipped): every type, every error with its message, the gzip size cap, and the
// real Fashion-MNIST files when they are installed.
#include <dlrt/dlrt.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "io/idx.hpp"
#include "io/io_test_util.hpp"
#include "status.hpp"

namespace dlrt::io_test {
namespace {

using ::testing::HasSubstr;

struct Read {
  Result status;
  dlrt_idx_array array{};
  Read() { array.struct_size = DLRT_STRUCT_SIZE(dlrt_idx_array); }
  ~Read() { dlrt_idx_free(&array); }
};

// Writes `bytes` (gzipped when asked) to a file of `dir` and reads it.
void read_bytes(const TempDir& dir, const Bytes& bytes, Read* r, bool gz = false) {
  std::string path = dir.file(gz ? "a.idx.gz" : "a.idx");
  write_file(path, gz ? gzip(bytes) : bytes);
  r->status = take(dlrt_idx_read(path.c_str(), &r->array));
}

TEST(IdxRead, U8Plain) {
  TempDir dir;
  Read r;
  read_bytes(dir, idx_header(0x08, {2, 3}) + Bytes("\x01\x02\x03\x04\x05\xff", 6), &r);
  ASSERT_EQ(r.status.code, DLRT_OK) << r.status.message;
  EXPECT_EQ(r.array.dtype, DLRT_U8);
  ASSERT_EQ(r.array.rank, 2);
  EXPECT_EQ(r.array.dims[0], 2);
  EXPECT_EQ(r.array.dims[1], 3);
  ASSERT_EQ(r.array.bytes, 6u);
  const uint8_t* d = static_cast<const uint8_t*>(r.array.data);
  EXPECT_EQ(d[0], 1);
  EXPECT_EQ(d[5], 255);
}

TEST(IdxRead, MultiByteTypesAreBigEndianInTheFile) {
  TempDir dir;
  {
    Read r;  // i32: -2 and 0x01020304
    read_bytes(dir, idx_header(0x0C, {2}) + be32(0xFFFFFFFEu) + be32(0x01020304u), &r);
    ASSERT_EQ(r.status.code, DLRT_OK) << r.status.message;
    EXPECT_EQ(r.array.dtype, DLRT_I32);
    const int32_t* d = static_cast<const int32_t*>(r.array.data);
    EXPECT_EQ(d[0], -2);
    EXPECT_EQ(d[1], 0x01020304);
  }
  {
    Read r;  // f32: 1.5 = 0x3FC00000
    read_bytes(dir, idx_header(0x0D, {1}) + be32(0x3FC00000u), &r);
    ASSERT_EQ(r.status.code, DLRT_OK) << r.status.message;
    EXPECT_EQ(r.array.dtype, DLRT_F32);
    EXPECT_EQ(static_cast<const float*>(r.array.data)[0], 1.5f);
  }
  {
    Read r;  // f64: -0.25 = 0xBFD0000000000000
    read_bytes(dir, idx_header(0x0E, {1}) + be32(0xBFD00000u) + be32(0), &r);
    ASSERT_EQ(r.status.code, DLRT_OK) << r.status.message;
    EXPECT_EQ(r.array.dtype, DLRT_F64);
    EXPECT_EQ(static_cast<const double*>(r.array.data)[0], -0.25);
  }
  {
    Read r;
    read_bytes(dir, idx_header(0x09, {1}) + Bytes("\xfe", 1), &r);
    ASSERT_EQ(r.status.code, DLRT_OK) << r.status.message;
    EXPECT_EQ(r.array.dtype, DLRT_I8);
    EXPECT_EQ(static_cast<const int8_t*>(r.array.data)[0], -2);
  }
  {
    Read r;  // i16: -2 = 0xFFFE and 0x0102
    read_bytes(dir, idx_header(0x0B, {2}) + Bytes("\xff\xfe\x01\x02", 4), &r);
    ASSERT_EQ(r.status.code, DLRT_OK) << r.status.message;
    EXPECT_EQ(r.array.dtype, DLRT_I16);
    const int16_t* d = static_cast<const int16_t*>(r.array.data);
    EXPECT_EQ(d[0], -2);
    EXPECT_EQ(d[1], 0x0102);
  }
}

TEST(IdxRead, GzipEqualsPlain) {
  TempDir dir;
  Bytes file = idx_header(0x0C, {3, 2});
  for (uint32_t i = 0; i < 6; ++i) file += be32(i * 1000);
  Read plain, gz;
  read_bytes(dir, file, &plain);
  read_bytes(dir, file, &gz, true);
  ASSERT_EQ(gz.status.code, DLRT_OK) << gz.status.message;
  ASSERT_EQ(gz.array.bytes, plain.array.bytes);
  EXPECT_EQ(std::memcmp(gz.array.data, plain.array.data, gz.array.bytes), 0);
  EXPECT_EQ(static_cast<const int32_t*>(gz.array.data)[5], 5000);
}

TEST(IdxRead, MissingFileIsNotFoundNamingThePath) {
  Read r;
  r.status = take(dlrt_idx_read("/nonexistent/dlrt/x.idx", &r.array));
  EXPECT_EQ(r.status.code, DLRT_NOT_FOUND);
  EXPECT_THAT(r.status.message, HasSubstr("/nonexistent/dlrt/x.idx"));
  EXPECT_EQ(r.array.data, nullptr);
}

TEST(IdxRead, BadMagicNeitherGzipNorIdx) {
  TempDir dir;
  Read r;
  read_bytes(dir, Bytes("PK\x03\x04 not an idx file", 21), &r);
  EXPECT_EQ(r.status.code, DLRT_DATA_LOSS);
  EXPECT_THAT(r.status.message, HasSubstr("bad IDX magic 0x504B0304, expected 0x0000TTRR"));
  EXPECT_THAT(r.status.message, HasSubstr("not gzip"));
}

TEST(IdxRead, ErrorsOfTheHeader) {
  TempDir dir;
  auto expect = [&](const Bytes& bytes, dlrt_code code, const std::string& words) {
    Read r;
    read_bytes(dir, bytes, &r);
    EXPECT_EQ(r.status.code, code) << r.status.message;
    EXPECT_THAT(r.status.message, HasSubstr(words));
    EXPECT_EQ(r.array.data, nullptr);
  };
  expect(Bytes("\0\0", 2), DLRT_DATA_LOSS, "2 bytes long; an IDX file starts with a 4-byte magic");
  expect(idx_header(0x07, {1}) + "x", DLRT_DATA_LOSS,
         "bad IDX magic 0x00000701: type byte 0x07 is not an IDX type");
  expect(Bytes("\0\0\x08\0", 4), DLRT_DATA_LOSS, "says rank 0; expected 1..8");
  expect(Bytes("\0\0\x08\x09", 4) + Bytes(36, '\x01'), DLRT_UNIMPLEMENTED,
         "says rank 9; dlrt holds at most DLRT_MAX_RANK = 8");
  expect(Bytes("\0\0\x08\x03", 4) + be32(5), DLRT_DATA_LOSS,
         "header truncated: rank 3 needs 4 + 4×3 = 16 header bytes, the file has 8");
  expect(idx_header(0x0E, {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}), DLRT_DATA_LOSS,
         "dims 4294967295×4294967295×4294967295 of f64 overflow");
}

TEST(IdxRead, DataSizeMustMatchTheHeader) {
  TempDir dir;
  Read shorter, longer, wide;
  read_bytes(dir, idx_header(0x08, {3, 4}) + Bytes(10, 'x'), &shorter);
  EXPECT_EQ(shorter.status.code, DLRT_DATA_LOSS);
  EXPECT_THAT(
      shorter.status.message,
      HasSubstr("header says 3×4 = 12 bytes of data, file has 10 after its 12-byte header"));
  read_bytes(dir, idx_header(0x08, {3, 4}) + Bytes(14, 'x'), &longer);
  EXPECT_EQ(longer.status.code, DLRT_DATA_LOSS);
  EXPECT_THAT(longer.status.message, HasSubstr("file has 14 after its 12-byte header: 2 trailing"));
  read_bytes(dir, idx_header(0x0D, {2}) + Bytes(7, 'x'), &wide);
  EXPECT_THAT(wide.status.message, HasSubstr("header says 2 f32 × 4 bytes = 8 bytes of data, "
                                             "file has 7"));
}

TEST(IdxRead, GzipErrors) {
  TempDir dir;
  Bytes good = idx_header(0x08, {64}) + Bytes(64, 'a');
  Bytes gz = gzip(good);
  auto read_raw = [&](const Bytes& raw) {
    write_file(dir.file("b.gz"), raw);
    Read r;
    r.status = take(dlrt_idx_read(dir.file("b.gz").c_str(), &r.array));
    return r.status;
  };
  Result truncated = read_raw(gz.substr(0, gz.size() - 6));
  EXPECT_EQ(truncated.code, DLRT_DATA_LOSS);
  EXPECT_THAT(truncated.message, HasSubstr("truncated gzip stream"));

  Bytes corrupt = gz;
  for (size_t i = 10; i < 16; ++i) corrupt[i] = '\xff';  // the deflate blocks
  Result bad = read_raw(corrupt);
  EXPECT_EQ(bad.code, DLRT_DATA_LOSS);
  EXPECT_THAT(bad.message, HasSubstr("corrupt gzip stream"));

  Result after = read_raw(gz + "junk");
  EXPECT_EQ(after.code, DLRT_DATA_LOSS);
  EXPECT_THAT(after.message, HasSubstr("4 bytes follow the end of the gzip stream"));

  // A complete stream whose data is short: the size error, marked decompressed.
  Result shorter = read_raw(gzip(idx_header(0x08, {64}) + Bytes(60, 'a')));
  EXPECT_EQ(shorter.code, DLRT_DATA_LOSS);
  EXPECT_THAT(shorter.message,
              HasSubstr("header says 64 = 64 bytes of data, file has 60 after its 8-byte "
                        "header (decompressed)"));

  Result magic = read_raw(gzip(Bytes("\x12\x34\x56\x78", 4)));
  EXPECT_THAT(magic.message, HasSubstr("bad IDX magic 0x12345678, expected 0x0000TTRR"));
  EXPECT_THAT(magic.message, HasSubstr("after gunzip"));
}

// A gzip "bomb": a few KB that inflate to 80 MiB. The header says 4 bytes; the reader stops
// counting the excess at 64 MiB and never holds more than the 4 bytes it expects.
TEST(IdxRead, GzipBombIsCutShort) {
  TempDir dir;
  Read r;
  read_bytes(dir, idx_header(0x08, {2, 2}) + Bytes(80u << 20, '\0'), &r, true);
  EXPECT_EQ(r.status.code, DLRT_DATA_LOSS);
  EXPECT_THAT(r.status.message, HasSubstr("file has at least"));
  EXPECT_THAT(r.status.message, HasSubstr("trailing bytes"));
}

// A header that claims ~1 TB over a small stream: the buffer grows only with the data that
// arrives, so this is a size error, not an allocation of 1 TB.
TEST(IdxRead, LyingHeaderDoesNotAllocateWhatItClaims) {
  TempDir dir;
  {
    // 2 GiB claimed (under DLRT_IDX_MAX_BYTES), 100 bytes in the gzip stream: the buffer grows
    // only with the data, so this fails on the missing data, not on malloc.
    Read r;
    read_bytes(dir, idx_header(0x08, {0x80000000u, 1}) + Bytes(100, 'z'), &r, true);
    EXPECT_EQ(r.status.code, DLRT_DATA_LOSS);
    EXPECT_THAT(r.status.message, HasSubstr("header says 2147483648×1 = 2147483648 bytes of "
                                            "data, file has 100"));
  }
  // 1 TB claimed: over the reader's limit, refused before reading the stream.
  Read r;
  read_bytes(dir, idx_header(0x08, {0xFFFFFFFFu, 255}) + Bytes(100, 'z'), &r, true);
  EXPECT_EQ(r.status.code, DLRT_RESOURCE_EXHAUSTED);
  EXPECT_THAT(r.status.message, HasSubstr("header says 4294967295×255 = 1095216660225 bytes of "
                                          "data, more than the IDX reader's limit"));
}

TEST(IdxRead, StructSizeAndFree) {
  dlrt_idx_array a{};
  a.struct_size = 4;
  Result r = take(dlrt_idx_read("/x", &a));
  EXPECT_EQ(r.code, DLRT_INVALID_ARGUMENT);
  EXPECT_THAT(r.message, HasSubstr("struct_size is 4"));
  EXPECT_EQ(take(dlrt_idx_read("/x", nullptr)).code, DLRT_INVALID_ARGUMENT);
  dlrt_idx_free(nullptr);
  a.struct_size = sizeof(a);
  dlrt_idx_free(&a);  // nothing to free
  dlrt_idx_free(&a);
}

TEST(IdxParse, InMemoryMatchesTheFileReader) {
  Bytes file = idx_header(0x0D, {2}) + be32(0x3F800000u) + be32(0x40000000u);
  Bytes gz = gzip(file);
  for (const Bytes* b : {&file, &gz}) {
    core::io::IdxArray a =
        core::io::parse_idx(reinterpret_cast<const uint8_t*>(b->data()), b->size());
    ASSERT_EQ(a.bytes, 8u);
    EXPECT_EQ(reinterpret_cast<const float*>(a.data.get())[1], 2.0f);
  }
  try {
    core::io::parse_idx(nullptr, 0);
    FAIL() << "an empty input parsed";
  } catch (const core::Error& e) {
    EXPECT_THAT(e.message(), HasSubstr("<memory>: 0 bytes long"));
  }
}

// The real thing, when the machine has it (skipped otherwise).
TEST(IdxRead, FashionMnist) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  if (!std::filesystem::exists(dir + "train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << dir << " is not installed";
  Read images, labels;
  images.status = take(dlrt_idx_read((dir + "train-images-idx3-ubyte.gz").c_str(), &images.array));
  ASSERT_EQ(images.status.code, DLRT_OK) << images.status.message;
  EXPECT_EQ(images.array.dtype, DLRT_U8);
  ASSERT_EQ(images.array.rank, 3);
  EXPECT_EQ(images.array.dims[0], 60000);
  EXPECT_EQ(images.array.dims[1], 28);
  EXPECT_EQ(images.array.dims[2], 28);
  EXPECT_EQ(images.array.bytes, 47040000u);
  labels.status = take(dlrt_idx_read((dir + "train-labels-idx1-ubyte.gz").c_str(), &labels.array));
  ASSERT_EQ(labels.status.code, DLRT_OK) << labels.status.message;
  ASSERT_EQ(labels.array.rank, 1);
  EXPECT_EQ(labels.array.dims[0], 60000);
  const uint8_t* l = static_cast<const uint8_t*>(labels.array.data);
  int counts[10] = {};
  for (size_t i = 0; i < labels.array.bytes; ++i) {
    ASSERT_LT(l[i], 10) << "label " << i;
    ++counts[l[i]];
  }
  for (int c = 0; c < 10; ++c) EXPECT_EQ(counts[c], 6000) << "class " << c;  // balanced
}

}  // namespace
}  // namespace dlrt::io_test
