// Shape inference of resize and resize_grad: output dims in both layouts, the defaults
// plugins receive, and the messages of bad calls.
#include <gtest/gtest.h>

#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::invalid;
using testing::out_dims;

TEST(InferResize, OutputDimsBothLayouts) {
  EXPECT_EQ(out_dims("resize", {f32({2, 3, 4, 5})}, {{"size", Ints{6, 8}}}), (Dims{2, 6, 8, 5}));
  EXPECT_EQ(
      out_dims("resize", {f32({2, 5, 3, 4})}, {{"size", Ints{1, 7}}, {"data_format", "NCHW"}}),
      (Dims{2, 5, 1, 7}));
  EXPECT_EQ(out_dims("resize", {f32({1, 9, 9, 1})}, {{"size", Ints{3, 2}}, {"mode", "bilinear"}}),
            (Dims{1, 3, 2, 1}));
}

TEST(InferResize, DefaultsAreOnnxs) {
  Result<OpInstance> r = instantiate("resize", {f32({1, 2, 2, 1})}, {{"size", Ints{4, 4}}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->attrs().at("mode"), AttrValue("nearest"));
  EXPECT_EQ(r->attrs().at("coordinate_transformation"), AttrValue("half_pixel"));
  EXPECT_EQ(r->attrs().at("nearest_mode"), AttrValue("round_prefer_floor"));
  EXPECT_EQ(r->attrs().at("data_format"), AttrValue("NHWC"));
}

TEST(InferResize, GradGivesInputShape) {
  EXPECT_EQ(out_dims("resize_grad", {f32({2, 6, 8, 5})}, {{"input_shape", Ints{2, 3, 4, 5}}}),
            (Dims{2, 3, 4, 5}));
  EXPECT_EQ(out_dims("resize_grad", {f32({2, 5, 1, 7})},
                     {{"input_shape", Ints{2, 5, 3, 4}}, {"data_format", "NCHW"}}),
            (Dims{2, 5, 3, 4}));
}

TEST(InferResize, Errors) {
  EXPECT_TRUE(invalid("resize", {f32({2, 3, 4})}, {{"size", Ints{2, 2}}},
                      {"resize: input 0 (x) must have rank 4 (N,H,W,C), got rank 3"}));
  EXPECT_TRUE(invalid("resize", {f32({1, 2, 2, 1})}, {}, {"resize", "size"}));  // required
  EXPECT_TRUE(invalid("resize", {f32({1, 2, 2, 1})}, {{"size", Ints{0, 2}}}, {"resize", "size"}));
  EXPECT_TRUE(invalid("resize", {f32({1, 2, 2, 1})}, {{"size", Ints{2}}}, {"resize", "size"}));
  EXPECT_TRUE(invalid("resize", {f32({1, 2, 2, 1})}, {{"size", Ints{2, 2}}, {"mode", "cubic"}},
                      {"resize", "mode", "cubic"}));
  EXPECT_TRUE(invalid("resize", {f32({1, 2, 2, 1})},
                      {{"size", Ints{2, 2}}, {"coordinate_transformation", "tf_crop_and_resize"}},
                      {"resize", "coordinate_transformation"}));
  EXPECT_TRUE(invalid("resize_grad", {f32({2, 6, 8, 4})}, {{"input_shape", Ints{2, 3, 4, 5}}},
                      {"resize_grad: input 0 (dy) has dims (2,6,8,4), expected N = 2 and C = 5 "
                       "(those of attribute input_shape (2,3,4,5))"}));
  EXPECT_TRUE(invalid("resize_grad", {f32({2, 6, 8, 5})}, {}, {"resize_grad", "input_shape"}));
}

}  // namespace
}  // namespace dlrt::ops
