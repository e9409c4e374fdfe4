// Tests of the shared shape rules: TF's SAME/VALID sizes and padding, broadcasting, axes.
#include "shape_util.hpp"

#include <gtest/gtest.h>

namespace dlrt::ops {
namespace {

TEST(ShapeUtil, ValidOutputSize) {
  EXPECT_EQ(window_output_size(Padding::kValid, 28, 3, 1), 26);
  EXPECT_EQ(window_output_size(Padding::kValid, 26, 2, 2), 13);
  EXPECT_EQ(window_output_size(Padding::kValid, 7, 3, 2), 3);
  EXPECT_EQ(window_output_size(Padding::kValid, 7, 3, 1, 2), 3);  // dilated span 5
  EXPECT_EQ(window_output_size(Padding::kValid, 1, 2, 2), 0);     // window longer than input
  EXPECT_LE(window_output_size(Padding::kValid, 1, 5, 1), 0);
}

TEST(ShapeUtil, SameOutputSizeIsCeilOfInOverStride) {
  EXPECT_EQ(window_output_size(Padding::kSame, 28, 3, 1), 28);
  EXPECT_EQ(window_output_size(Padding::kSame, 7, 3, 2), 4);
  EXPECT_EQ(window_output_size(Padding::kSame, 1, 5, 1), 1);
  EXPECT_EQ(window_output_size(Padding::kSame, 5, 2, 2), 3);
}

TEST(ShapeUtil, SamePaddingPutsTheExtraCellAfter) {
  // in 7, k 3, s 2: out 4, total = 3*2 + 3 - 7 = 2 -> (1,1)
  EXPECT_EQ(same_padding(7, 3, 2).before, 1);
  EXPECT_EQ(same_padding(7, 3, 2).after, 1);
  // in 6, k 3, s 2: out 3, total = 2*2 + 3 - 6 = 1 -> (0,1)
  EXPECT_EQ(same_padding(6, 3, 2).before, 0);
  EXPECT_EQ(same_padding(6, 3, 2).after, 1);
  // in 5, k 2, s 2: out 3, total = 4 + 2 - 5 = 1 -> (0,1)
  EXPECT_EQ(same_padding(5, 2, 2).after, 1);
  // in 8, k 1, s 1: nothing
  EXPECT_EQ(same_padding(8, 1, 1).before + same_padding(8, 1, 1).after, 0);
  // dilation 2, k 3, in 5, s 1: out 5, total = 4 + 5 - 5 = 4 -> (2,2)
  EXPECT_EQ(same_padding(5, 3, 1, 2).before, 2);
}

TEST(ShapeUtil, BroadcastAlignsTrailingDims) {
  EXPECT_EQ(broadcast_shapes({3, 1, 5}, {4, 5}).dims, (Dims{3, 4, 5}));
  EXPECT_EQ(broadcast_shapes({}, {2, 3}).dims, (Dims{2, 3}));
  EXPECT_EQ(broadcast_shapes({2, 1}, {1, 3}).dims, (Dims{2, 3}));
  EXPECT_EQ(broadcast_shapes({5}, {5}).dims, (Dims{5}));
}

TEST(ShapeUtil, BroadcastConflictNamesTheAxes) {
  const Broadcast r = broadcast_shapes({7, 1}, {2, 7, 4});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.dims, (Dims{2, 7, 4}));
  const Broadcast bad = broadcast_shapes({2, 3, 4}, {5, 4});
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.conflict_a, 1);
  EXPECT_EQ(bad.conflict_b, 0);
}

TEST(ShapeUtil, NormalizeAxis) {
  EXPECT_EQ(normalize_axis(-1, 3), 2);
  EXPECT_EQ(normalize_axis(-3, 3), 0);
  EXPECT_EQ(normalize_axis(2, 3), 2);
  EXPECT_FALSE(normalize_axis(3, 3).has_value());
  EXPECT_FALSE(normalize_axis(-4, 3).has_value());
  EXPECT_FALSE(normalize_axis(0, 0).has_value());
}

TEST(ShapeUtil, Formatting) {
  EXPECT_EQ(format_dims({3, 5}), "(3,5)");
  EXPECT_EQ(format_dims({}), "()");
  EXPECT_EQ(dtype_name(DLRT_BF16), "bf16");
  EXPECT_EQ(dtype_name(static_cast<dlrt_dtype>(42)), "dtype(42)");
  EXPECT_EQ(parse_dtype("i64"), DLRT_I64);
  EXPECT_FALSE(parse_dtype("float").has_value());
  EXPECT_EQ(format_dtypes({DLRT_F32, DLRT_F16}), "f32|f16");
  EXPECT_EQ(num_elements({2, 3, 4}), 24);
  EXPECT_EQ(num_elements({}), 1);
}

}  // namespace
}  // namespace dlrt::ops
