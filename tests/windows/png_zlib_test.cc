// png_zlib_test.cc: the zlib-only PNG encoder of the Windows build (core/io/png_encode_zlib.cc)
// read back by hand: the signature, each chunk's CRC, IHDR's fields, and the inflated IDAT
// equal to the pixels row by row (filter byte 0 first). No PNG decoder exists for mingw here,
// so the test is its own small reader, following the PNG specification's chunk layout.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/png_write.hpp"
#include "status.hpp"

namespace {

uint32_t be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

struct Chunk {
  std::string type;
  std::vector<uint8_t> data;
};

// The chunks of `png`, failing the test on a bad signature, length or CRC.
std::vector<Chunk> read_chunks(const std::vector<uint8_t>& png) {
  const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<Chunk> chunks;
  EXPECT_GE(png.size(), 8u);
  EXPECT_TRUE(std::equal(signature, signature + 8, png.begin()));
  size_t at = 8;
  while (at + 12 <= png.size()) {
    const uint32_t length = be32(&png[at]);
    EXPECT_LE(at + 12 + length, png.size());
    if (at + 12 + length > png.size()) break;
    Chunk c{std::string(png.begin() + at + 4, png.begin() + at + 8),
            std::vector<uint8_t>(png.begin() + at + 8, png.begin() + at + 8 + length)};
    const uLong crc = crc32(crc32(0L, Z_NULL, 0), &png[at + 4], 4 + length);
    EXPECT_EQ(be32(&png[at + 8 + length]), static_cast<uint32_t>(crc)) << c.type;
    chunks.push_back(std::move(c));
    at += 12 + length;
  }
  EXPECT_EQ(at, png.size());
  return chunks;
}

TEST(WindowsPng, RgbImageRoundTrips) {
  const int64_t h = 2, w = 3;
  const std::vector<uint8_t> pixels = {255, 0, 0,   0, 255, 0,   0, 0, 255,
                                       10, 20, 30,  40, 50, 60,  70, 80, 90};
  const std::vector<uint8_t> png =
      dlrt::core::io::encode_png(pixels.data(), pixels.size(), h, w, 3);
  const std::vector<Chunk> chunks = read_chunks(png);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].type, "IHDR");
  EXPECT_EQ(chunks[1].type, "IDAT");
  EXPECT_EQ(chunks[2].type, "IEND");
  const std::vector<uint8_t>& ihdr = chunks[0].data;
  ASSERT_EQ(ihdr.size(), 13u);
  EXPECT_EQ(be32(&ihdr[0]), 3u);  // width
  EXPECT_EQ(be32(&ihdr[4]), 2u);  // height
  EXPECT_EQ(ihdr[8], 8);          // bit depth
  EXPECT_EQ(ihdr[9], 2);          // colour type RGB
  EXPECT_EQ(ihdr[12], 0);         // not interlaced

  std::vector<uint8_t> raw((w * 3 + 1) * h + 16);
  uLongf raw_size = raw.size();
  ASSERT_EQ(uncompress(raw.data(), &raw_size, chunks[1].data.data(), chunks[1].data.size()), Z_OK);
  ASSERT_EQ(raw_size, static_cast<uLongf>((w * 3 + 1) * h));
  for (int64_t y = 0; y < h; ++y) {
    EXPECT_EQ(raw[y * (w * 3 + 1)], 0) << "filter byte of row " << y;
    for (int64_t i = 0; i < w * 3; ++i)
      EXPECT_EQ(raw[y * (w * 3 + 1) + 1 + i], pixels[y * w * 3 + i]) << "row " << y << " byte " << i;
  }
}

TEST(WindowsPng, ColourTypePerChannelCount) {
  const uint8_t colour[5] = {0, 0, 4, 2, 6};  // by channels: gray, gray+alpha, RGB, RGBA
  for (int32_t c = 1; c <= 4; ++c) {
    const std::vector<uint8_t> pixels(static_cast<size_t>(c), 7);
    const std::vector<Chunk> chunks =
        read_chunks(dlrt::core::io::encode_png(pixels.data(), pixels.size(), 1, 1, c));
    ASSERT_FALSE(chunks.empty());
    EXPECT_EQ(chunks[0].data[9], colour[c]) << c << " channels";
  }
}

TEST(WindowsPng, WrongPixelCountIsAnErrorNamingIt) {
  const std::vector<uint8_t> pixels(5);
  try {
    dlrt::core::io::encode_png(pixels.data(), pixels.size(), 2, 2, 1);
    FAIL() << "no error";
  } catch (const dlrt::core::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("5 pixel bytes given, expected 4"), std::string::npos)
        << e.what();
  }
}

}  // namespace
