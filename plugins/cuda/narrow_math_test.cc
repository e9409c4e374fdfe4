// narrow_math_test.cc: narrow.cu's f16/bf16 conversions (narrow_math.hpp), run on the host
// and compared with plugins/common/narrow_float.hpp (exact, through double): every one of the
// 65,536 patterns of each format widened, and edge and random floats narrowed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "narrow_float.hpp"
#include "narrow_math.hpp"

namespace dlrt::cuda {
namespace {

bool same(float a, float b) {  // bit-equal, or both NaN
  return (std::isnan(a) && std::isnan(b)) || math::float_bits(a) == math::float_bits(b);
}

TEST(NarrowMath, WideningEveryPatternIsExact) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t b = static_cast<uint16_t>(h);
    const float f16 = static_cast<float>(plugin::widen_to_double<plugin::F16Format>(b));
    const float bf16 = static_cast<float>(plugin::widen_to_double<plugin::BF16Format>(b));
    ASSERT_TRUE(same(math::f16_to_float(b), f16)) << std::hex << h;
    ASSERT_TRUE(same(math::bf16_to_float(b), bf16)) << std::hex << h;
  }
}

// Narrowing a float rounds once: the same bits as the exact double path, NaNs aside (both
// give a NaN of the same sign).
void expect_narrowed_like_reference(float f) {
  const uint16_t want16 = plugin::narrow_from_double<plugin::F16Format>(f);
  const uint16_t wantb = plugin::narrow_from_double<plugin::BF16Format>(f);
  const uint16_t got16 = math::float_to_f16(f), gotb = math::float_to_bf16(f);
  if (std::isnan(f)) {
    EXPECT_TRUE(std::isnan(math::f16_to_float(got16)));
    EXPECT_TRUE(std::isnan(math::bf16_to_float(gotb)));
    EXPECT_EQ(got16 & 0x8000, want16 & 0x8000);
    return;
  }
  ASSERT_EQ(got16, want16) << "f16 of " << f << " (bits " << std::hex << math::float_bits(f) << ")";
  ASSERT_EQ(gotb, wantb) << "bf16 of " << f << " (bits " << std::hex << math::float_bits(f) << ")";
}

TEST(NarrowMath, NarrowingRoundsToNearestEvenAsTheReference) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float f : {0.f,
                  -0.f,
                  1.f,
                  -1.f,
                  65504.f,
                  65519.f,
                  65520.f,
                  65536.f,
                  1e9f,
                  inf,
                  -inf,
                  std::numeric_limits<float>::quiet_NaN(),
                  6.1035156e-05f /* 2^-14 */,
                  6.0975552e-05f /* largest f16 subnormal */,
                  5.9604645e-08f /* 2^-24 */,
                  2.9802322e-08f /* 2^-25: tie to 0 */,
                  2.9802326e-08f,
                  8.940697e-08f /* 1.5 * 2^-24 */,
                  1.0009766f /* 1 + 2^-10 */,
                  1.00048828f /* tie in f16 */,
                  1.00390625f /* tie in bf16 */,
                  3.3895314e38f,
                  std::numeric_limits<float>::max(),
                  1e-40f /* f32 subnormal */})
    expect_narrowed_like_reference(f);
  // Every exponent, random mantissas, both signs; and the halfway points of f16 and bf16
  // around each pattern.
  std::mt19937 gen(7);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t u = gen();
    float f;
    std::memcpy(&f, &u, 4);
    expect_narrowed_like_reference(f);
  }
  for (uint32_t h = 0; h < 0x7C00; h += 7) {
    const float lo = math::f16_to_float(static_cast<uint16_t>(h));
    const float hi = math::f16_to_float(static_cast<uint16_t>(h + 1));
    expect_narrowed_like_reference(lo + (hi - lo) / 2);  // exact in f32: a tie
  }
}

}  // namespace
}  // namespace dlrt::cuda
