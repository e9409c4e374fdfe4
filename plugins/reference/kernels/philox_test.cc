// philox_test.cc: plugins/common/philox.hpp against Random123's published known-answer
// vectors (kat_vectors, philox4x32 with 10 rounds), and the element mapping of docs/ops.md.
#include "philox.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using dlrt::philox::Block;

void expect_block(Block got, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  EXPECT_EQ(got.w[0], a);
  EXPECT_EQ(got.w[1], b);
  EXPECT_EQ(got.w[2], c);
  EXPECT_EQ(got.w[3], d);
}

TEST(Philox, KnownAnswerZero) {
  expect_block(dlrt::philox::philox4x32_10(Block{{0, 0, 0, 0}}, 0, 0), 0x6627e8d5u, 0xe169c58du,
               0xbc57ac4cu, 0x9b00dbd8u);
}

TEST(Philox, KnownAnswerAllOnes) {
  expect_block(
      dlrt::philox::philox4x32_10(Block{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
                                  0xffffffffu, 0xffffffffu),
      0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu);
}

TEST(Philox, KnownAnswerPi) {
  expect_block(
      dlrt::philox::philox4x32_10(Block{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
                                  0xa4093822u, 0x299f31d0u),
      0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u);
}

// counter = (lo(i/4), hi(i/4), lo(offset), hi(offset)), key = (lo(seed), hi(seed)), word i%4.
TEST(Philox, ElementMapping) {
  const uint64_t seed = 0x299f31d0a4093822ull, offset = 0x0370734413198a2eull;
  const uint64_t block = 0x05a308d3243f6a88ull;  // element indices are u64: block < 2^62
  Block want = dlrt::philox::philox4x32_10(
      Block{{0x243f6a88u, 0x05a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u);
  for (uint64_t w = 0; w < 4; ++w)
    EXPECT_EQ(dlrt::philox::bits(seed, offset, block * 4 + w), want.w[w]) << w;
  EXPECT_NE(dlrt::philox::bits(seed, offset + 1, block * 4), want.w[0]);
  // Known answer through the mapping: seed 0, offset 0, elements 0..3 are block 0.
  EXPECT_EQ(dlrt::philox::bits(0, 0, 0), 0x6627e8d5u);
  EXPECT_EQ(dlrt::philox::bits(0, 0, 2), 0xbc57ac4cu);
  EXPECT_EQ(dlrt::philox::bits(0, 0, 3), 0x9b00dbd8u);
}

TEST(Philox, UniformIsTop24BitsScaled) {
  EXPECT_EQ(dlrt::philox::to_uniform(0u), 0.0f);
  EXPECT_EQ(dlrt::philox::to_uniform(0xffffffffu), 1.0f - 1.0f / 16777216.0f);
  EXPECT_EQ(dlrt::philox::to_uniform(0x80000000u), 0.5f);
  EXPECT_EQ(dlrt::philox::uniform(0, 0, 0), float(0x6627e8d5u >> 8) / 16777216.0f);
}

TEST(Philox, NormalIsBoxMullerOfAPair) {
  // Element 2 and 3 share words 2 and 3 of block 0 (counter 0, key 0).
  double u1 = 1.0 - double(0xbc57ac4cu >> 8) / 16777216.0,
         u2 = double(0x9b00dbd8u >> 8) / 16777216.0;
  double r = std::sqrt(-2.0 * std::log(u1)), th = 2.0 * M_PI * u2;
  EXPECT_DOUBLE_EQ(dlrt::philox::normal(0, 0, 2), r * std::cos(th));
  EXPECT_DOUBLE_EQ(dlrt::philox::normal(0, 0, 3), r * std::sin(th));
}

TEST(Philox, NormalMoments) {
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    double z = dlrt::philox::normal(7, 3, uint64_t(i));
    sum += z, sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sq / n, 1.0, 0.02);
}

}  // namespace
