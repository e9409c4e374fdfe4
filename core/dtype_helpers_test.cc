// dtype_helpers_test.cc: types.h's dlrt_dtype_size / dlrt_dtype_name, the one copy of the
// dtype table, and the wrappers over it (core::dtype_size, the C++ SDK's dtype_name) that
// must agree with the op registry's names (ops::dtype_name, parse_dtype).
#include <gtest/gtest.h>

#include <dlrt/dlrt.hpp>
#include <dlrt/types.h>

#include <string>

#include "ops/shape_util.hpp"
#include "tensor.hpp"

namespace {

struct Row {
  dlrt_dtype dtype;
  size_t size;
  const char* name;
};
constexpr Row kRows[] = {
    {DLRT_F32, 4, "f32"}, {DLRT_F16, 2, "f16"}, {DLRT_BF16, 2, "bf16"},
    {DLRT_F64, 8, "f64"}, {DLRT_I32, 4, "i32"}, {DLRT_I64, 8, "i64"},
    {DLRT_U8, 1, "u8"},   {DLRT_I8, 1, "i8"},   {DLRT_BOOL, 1, "bool"},
    {DLRT_U16, 2, "u16"}, {DLRT_U32, 4, "u32"}, {DLRT_U64, 8, "u64"},
    {DLRT_I16, 2, "i16"},
};

// The values are the ABI's (types.h appends, never renumbers): 10..13 came after bool's 9.
TEST(DtypeHelpers, TheSixteenToSixtyFourBitIntegersAreAppendedAfterBool) {
  EXPECT_EQ(DLRT_BOOL, 9);
  EXPECT_EQ(DLRT_U16, 10);
  EXPECT_EQ(DLRT_U32, 11);
  EXPECT_EQ(DLRT_U64, 12);
  EXPECT_EQ(DLRT_I16, 13);
}

TEST(DtypeHelpers, EveryDtypeHasItsSizeAndName) {
  for (const Row& r : kRows) {
    EXPECT_EQ(dlrt_dtype_size(r.dtype), r.size) << r.name;
    ASSERT_NE(dlrt_dtype_name(r.dtype), nullptr) << r.name;
    EXPECT_STREQ(dlrt_dtype_name(r.dtype), r.name);
    // The wrappers and the op registry's table say the same.
    EXPECT_EQ(dlrt::core::dtype_size(r.dtype), r.size) << r.name;
    EXPECT_EQ(dlrt::dtype_name(r.dtype), r.name);
    EXPECT_EQ(dlrt::ops::dtype_name(r.dtype), r.name);
    EXPECT_EQ(dlrt::ops::parse_dtype(r.name), r.dtype) << r.name;
  }
}

TEST(DtypeHelpers, InvalidAndUnknownValuesHaveNoSizeAndNoName) {
  for (int32_t v : {static_cast<int32_t>(DLRT_DTYPE_INVALID), 14, 42, -1}) {
    EXPECT_EQ(dlrt_dtype_size(v), 0u) << v;
    EXPECT_EQ(dlrt_dtype_name(v), nullptr) << v;
  }
  EXPECT_EQ(dlrt::dtype_name(DLRT_DTYPE_INVALID), "invalid");
}

}  // namespace
