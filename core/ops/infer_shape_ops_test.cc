// Shape inference of concat, split, slice, pad, the global pools and their backward ops:
// output dims, the normalised attributes plugins receive, and the messages of bad calls.
#include <gtest/gtest.h>

#include <limits>

#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::i32;
using testing::invalid;
using testing::out_dims;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Instantiates (expecting success) and returns the instance.
OpInstance make(std::string_view op, const std::vector<TensorType>& in, const AttrMap& attrs) {
  Result<OpInstance> r = instantiate(op, in, attrs);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return std::move(*r);
}

TEST(InferShapeOps, ConcatAnyCountNegativeAxis) {
  EXPECT_EQ(out_dims("concat", {f32({2, 3}), f32({2, 5})}, {{"axis", 1}}), (Dims{2, 8}));
  EXPECT_EQ(out_dims("concat", {f32({1, 4, 3}), f32({1, 4, 5}), f32({1, 4, 1})}, {{"axis", -1}}),
            (Dims{1, 4, 9}));
  EXPECT_EQ(out_dims("concat", {f32({7})}, {{"axis", 0}}), (Dims{7}));
  OpInstance c = make("concat", {f32({2, 3}), f32({4, 3})}, {{"axis", -2}});
  EXPECT_EQ(c.attrs().at("axis"), AttrValue(int64_t{0}));  // plugins see it normalised
  EXPECT_EQ(c.desc().num_inputs, 2u);
}

TEST(InferShapeOps, ConcatErrors) {
  EXPECT_TRUE(invalid("concat", {f32({2, 3}), f32({3, 5})}, {{"axis", 1}},
                      {"concat: input 1 (x) has dims (3,5), expected (2,*) (the dims of input 0 "
                       "(x) (2,3) except on axis 1)"}));
  EXPECT_TRUE(invalid("concat", {f32({2, 3}), f32({2, 3, 1})}, {{"axis", 0}},
                      {"input 1 (x) has dims (2,3,1), expected (*,3)"}));
  EXPECT_TRUE(invalid("concat", {f32({2, 3}), i32({2, 3})}, {{"axis", 0}},
                      {"concat: input 1 (x) has dtype i32, expected f32 to match input 0 (x)"}));
  EXPECT_TRUE(
      invalid("concat", {}, {{"axis", 0}}, {"concat: expected at least 1 input (x...), got 0"}));
  EXPECT_TRUE(invalid("concat", {f32({2, 3})}, {{"axis", 2}},
                      {"concat: attribute 'axis' is 2, out of range for input 0 (x) of rank 2 "
                       "(expected -2..1)"}));
  EXPECT_TRUE(invalid("concat", {f32({2})}, {}, {"concat", "axis"}));  // required
}

TEST(InferShapeOps, SplitSizesNumAndMinusOne) {
  OpInstance s = make("split", {f32({2, 7})}, {{"axis", -1}, {"sizes", Ints{3, -1, 2}}});
  ASSERT_EQ(s.outputs().size(), 3u);
  EXPECT_EQ(s.output(1).dims, (Dims{2, 2}));
  EXPECT_EQ(s.attrs().at("sizes"), AttrValue(Ints{3, 2, 2}));
  EXPECT_EQ(s.attrs().at("axis"), AttrValue(int64_t{1}));
  EXPECT_EQ(s.attrs().at("num"), AttrValue(int64_t{3}));
  EXPECT_EQ(s.desc().num_outputs, 3u);
  OpInstance n = make("split", {f32({6, 4})}, {{"num", 3}});
  ASSERT_EQ(n.outputs().size(), 3u);
  for (const TensorType& t : n.outputs()) EXPECT_EQ(t.dims, (Dims{2, 4}));
  // The normalised attributes infer the same again (instantiate_desc re-checks them).
  Result<OpInstance> again = instantiate_desc(n.desc());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->outputs(), n.outputs());
}

TEST(InferShapeOps, SplitErrors) {
  EXPECT_TRUE(invalid("split", {f32({3, 5})}, {{"axis", 1}, {"sizes", Ints{2, 2}}},
                      {"split: attribute 'sizes' (2,2) sums to 4, expected 5 (dim 1 of input 0 "
                       "(x) (3,5))"}));
  EXPECT_TRUE(invalid("split", {f32({3, 5})}, {{"axis", 1}, {"num", 2}},
                      {"split: attribute 'num' 2 does not divide dim 1 of input 0 (x) (3,5)"}));
  EXPECT_TRUE(invalid("split", {f32({3, 5})}, {},
                      {"split: give attribute 'sizes' (the part lengths) or 'num'"}));
  EXPECT_TRUE(invalid("split", {f32({6})}, {{"sizes", Ints{2, 4}}, {"num", 3}},
                      {"split: attribute 'num' is 3 but 'sizes' (2,4) has 2 parts"}));
  EXPECT_TRUE(invalid("split", {f32({6})}, {{"sizes", Ints{6, 0}}},
                      {"split: attribute 'sizes' (6,0) has 0 at index 1, expected >= 1"}));
  EXPECT_TRUE(
      invalid("split", {f32({6})}, {{"sizes", Ints{6, -1}}}, {"leaves nothing for its -1"}));
}

TEST(InferShapeOps, SliceLikeOnnx) {
  EXPECT_EQ(out_dims("slice", {f32({5, 7})}, {{"begin", Ints{1, 2}}, {"end", Ints{4, 7}}}),
            (Dims{3, 5}));
  // Dims past `begin`'s length are taken whole; bounds clamp; negatives count from the end.
  EXPECT_EQ(out_dims("slice", {f32({5, 7})}, {{"begin", Ints{-2}}, {"end", Ints{100}}}),
            (Dims{2, 7}));
  EXPECT_EQ(out_dims("slice", {f32({2, 9, 9})},
                     {{"axes", Ints{-2, 2}},
                      {"begin", Ints{1, 0}},
                      {"end", Ints{8, 9}},
                      {"strides", Ints{2, 3}}}),
            (Dims{2, 4, 3}));
  // Negative strides walk backwards: begin clamps to dim-1, end to -1 (ONNX).
  OpInstance r =
      make("slice", {f32({6, 5})},
           {{"axes", Ints{1}}, {"begin", Ints{10}}, {"end", Ints{-10}}, {"strides", Ints{-2}}});
  EXPECT_EQ(r.output(0).dims, (Dims{6, 3}));
  EXPECT_EQ(r.attrs().at("axes"), AttrValue(Ints{0, 1}));
  EXPECT_EQ(r.attrs().at("begin"), AttrValue(Ints{0, 4}));
  EXPECT_EQ(r.attrs().at("end"), AttrValue(Ints{6, kMin}));  // through index 0
  EXPECT_EQ(r.attrs().at("strides"), AttrValue(Ints{1, -2}));
  Result<OpInstance> again = instantiate_desc(r.desc());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->output(0), r.output(0));
  EXPECT_EQ(again->attrs(), r.attrs());
}

TEST(InferShapeOps, SliceErrors) {
  EXPECT_TRUE(invalid("slice", {f32({5})}, {{"begin", Ints{3}}, {"end", Ints{2}}},
                      {"slice: slice of dim 0 of input 0 (x) (5) is empty (begin 3, end 2, "
                       "stride 1); zero-sized tensors are not allowed"}));
  EXPECT_TRUE(invalid("slice", {f32({5})}, {{"begin", Ints{0}}, {"end", Ints{2, 3}}},
                      {"slice: attributes 'begin' (0) and 'end' (2,3) have 1 and 2 values"}));
  EXPECT_TRUE(invalid("slice", {f32({5})},
                      {{"begin", Ints{0}}, {"end", Ints{2}}, {"strides", Ints{0}}},
                      {"slice: attribute 'strides' (0) has a 0 at index 0"}));
  EXPECT_TRUE(invalid("slice", {f32({5, 2})},
                      {{"axes", Ints{0, -2}}, {"begin", Ints{0, 0}}, {"end", Ints{2, 1}}},
                      {"slice: attribute 'axes' (0,-2) names axis 0 twice"}));
  EXPECT_TRUE(invalid("slice", {f32({5})},
                      {{"axes", Ints{1}}, {"begin", Ints{0}}, {"end", Ints{1}}},
                      {"has axis 1, out of range for input 0 (x) of rank 1 (expected -1..0)"}));
}

TEST(InferShapeOps, SliceGrad) {
  EXPECT_EQ(out_dims("slice_grad", {f32({3, 5})},
                     {{"shape", Ints{5, 7}}, {"begin", Ints{1, 2}}, {"end", Ints{4, 7}}}),
            (Dims{5, 7}));
  EXPECT_TRUE(invalid("slice_grad", {f32({3, 4})},
                      {{"shape", Ints{5, 7}}, {"begin", Ints{1, 2}}, {"end", Ints{4, 7}}},
                      {"slice_grad: input 0 (dy) has dims (3,4), expected (3,5) (the slice of "
                       "attribute 'shape' (5,7))"}));
}

TEST(InferShapeOps, PadBothModes) {
  EXPECT_EQ(out_dims("pad", {f32({3, 4})}, {{"pads", Ints{1, 2, 0, 1}}}), (Dims{4, 7}));
  EXPECT_EQ(out_dims("pad", {f32({3, 4})}, {{"pads", Ints{2, 3, 2, 3}}, {"mode", "reflect"}}),
            (Dims{7, 10}));
  EXPECT_EQ(out_dims("pad_grad", {f32({7, 10})}, {{"pads", Ints{2, 3, 2, 3}}}), (Dims{3, 4}));
}

TEST(InferShapeOps, PadErrors) {
  EXPECT_TRUE(invalid("pad", {f32({1, 5, 5, 3})}, {{"pads", Ints{1, 1, 1, 1}}},
                      {"pad: attribute 'pads' (1,1,1,1) has 4 values, expected 8 (begin then end "
                       "for each of the 4 dims of input 0 (x), as ONNX)"}));
  EXPECT_TRUE(invalid("pad", {f32({3, 4})}, {{"pads", Ints{3, 0, 0, 0}}, {"mode", "reflect"}},
                      {"pad: reflect pad 3 before dim 0 of input 0 (x) (3,4) is larger than dim - "
                       "1 = 2"}));
  EXPECT_TRUE(invalid("pad", {f32({3, 4})}, {{"pads", Ints{0, 0, 0, 4}}, {"mode", "reflect"}},
                      {"reflect pad 4 after dim 1"}));
  EXPECT_TRUE(invalid("pad", {f32({3})}, {{"pads", Ints{-1, 0}}}, {"pad", "pads", ">= 0"}));
  EXPECT_TRUE(invalid("pad", {f32({3})}, {{"pads", Ints{0, 0}}, {"mode", "edge"}},
                      {"pad", "mode", "edge"}));
  EXPECT_TRUE(invalid("pad_grad", {f32({4})}, {{"pads", Ints{2, 2}}},
                      {"pad_grad: attribute 'pads' (2,2) leaves 0 cells of dim 0"}));
}

TEST(InferShapeOps, GlobalPools) {
  for (const char* op : {"global_avg_pool2d", "global_max_pool2d"}) {
    SCOPED_TRACE(op);
    EXPECT_EQ(out_dims(op, {f32({2, 5, 7, 3})}), (Dims{2, 3}));  // as Keras' keepdims=False
    EXPECT_EQ(out_dims(op, {f32({2, 5, 7, 3})}, {{"keepdims", true}}), (Dims{2, 1, 1, 3}));
    EXPECT_EQ(out_dims(op, {f32({2, 3, 5, 7})}, {{"data_format", "NCHW"}}), (Dims{2, 3}));
    EXPECT_EQ(out_dims(op, {f32({2, 3, 5, 7})}, {{"data_format", "NCHW"}, {"keepdims", true}}),
              (Dims{2, 3, 1, 1}));
    EXPECT_TRUE(
        invalid(op, {f32({2, 5, 7})}, {},
                {std::string(op) + ": input 0 (x) must have rank 4 (N,H,W,C), got rank 3"}));
  }
  EXPECT_EQ(
      out_dims("global_avg_pool2d_backward", {f32({2, 3})}, {{"input_shape", Ints{2, 5, 7, 3}}}),
      (Dims{2, 5, 7, 3}));
  EXPECT_TRUE(invalid("global_avg_pool2d_backward", {f32({2, 4})},
                      {{"input_shape", Ints{2, 5, 7, 3}}},
                      {"input 0 (dy) has dims (2,4), expected (2,3)"}));
  EXPECT_EQ(out_dims("global_max_pool2d_backward", {f32({1, 3, 4, 4}), f32({1, 3, 1, 1})},
                     {{"data_format", "NCHW"}, {"keepdims", true}}),
            (Dims{1, 3, 4, 4}));
  EXPECT_TRUE(invalid("global_max_pool2d_backward", {f32({1, 4, 4, 3}), f32({1, 1, 1, 3})}, {},
                      {"input 1 (dy) has dims (1,1,1,3), expected (1,3)"}));
}

}  // namespace
}  // namespace dlrt::ops
