// Shape inference of conv2d_transpose: Keras' deconv_output_length for VALID/SAME with and
// without output_padding, ONNX's rule with explicit pads, the pads the core spells out, and
// the errors (channel mismatch, output_padding >= stride, an empty output, stray pads).
#include <gtest/gtest.h>

#include "ops_test_util.hpp"

namespace dlrt::ops {
namespace {
using testing::f32;
using testing::invalid;
using testing::out_dims;

// One axis through the op (a 1-wide other axis, kernel 1 there): (OH, pads before/after).
struct Axis {
  int64_t out, before, after;
};
Axis axis_of(int64_t h, int64_t k, int64_t s, int64_t d, const char* padding, Ints output_padding,
             Ints pads = {0, 0, 0, 0}) {
  AttrMap a{{"strides", Ints{s, 1}}, {"dilations", Ints{d, 1}}, {"padding", padding}};
  if (!output_padding.empty()) a.emplace("output_padding", Ints{output_padding[0], 0});
  if (std::string(padding) == "EXPLICIT") a.emplace("pads", pads);
  Result<OpInstance> r = instantiate("conv2d_transpose", {f32({1, h, 1, 2}), f32({k, 1, 3, 2})}, a);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (!r.ok()) return {};
  const Ints& p = r->attrs().at("pads").as_ints();
  return {r->output(0).dims[1], p[0], p[2]};
}

// The numbers keras.layers.Conv2DTranspose gives (conv_utils.deconv_output_length):
//   output_padding None: valid H*s + max(k-s, 0), same H*s;
//   output_padding op:   (H-1)*s + k - 2*pad + op, pad = k//2 (same) or 0 (valid);
// k the dilated kernel (k-1)*d + 1.
TEST(InferConvTranspose, OutputLengthIsKerasDeconvOutputLength) {
  struct Case {
    int64_t h, k, s, d;
    const char* padding;
    Ints op;
    int64_t keras;
  };
  const Case cases[] = {
      {7, 3, 2, 1, "VALID", {}, 15},   // 14 + max(1, 0)
      {7, 3, 2, 1, "SAME", {}, 14},    // 14
      {7, 4, 2, 1, "VALID", {}, 16},   // 14 + 2
      {7, 4, 2, 1, "SAME", {}, 14},    // 14
      {4, 1, 3, 1, "VALID", {}, 12},   // 12 + max(-2, 0)
      {7, 3, 2, 1, "SAME", {1}, 14},   // 12 + 3 - 2 + 1
      {7, 3, 2, 1, "SAME", {0}, 13},   // 12 + 3 - 2 + 0
      {7, 3, 2, 1, "VALID", {1}, 16},  // 12 + 3 + 1
      {7, 3, 2, 1, "VALID", {0}, 15},  // 12 + 3
      {7, 2, 2, 1, "SAME", {0}, 12},   // 12 + 2 - 2 + 0
      {4, 5, 2, 1, "SAME", {0}, 7},    // 6 + 5 - 4
      {4, 5, 2, 1, "SAME", {1}, 8},    // 6 + 5 - 4 + 1
      {5, 3, 1, 2, "SAME", {}, 5},     // dilated 5: 5
      {5, 3, 1, 2, "VALID", {}, 9},    // 5 + max(5-1, 0)
      {5, 3, 3, 2, "VALID", {2}, 19},  // 12 + 5 + 2
      {3, 3, 3, 1, "SAME", {}, 9},     // 9
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "H " << c.h << " k " << c.k << " s " << c.s << " d " << c.d << " " << c.padding
                 << " op " << (c.op.empty() ? -1 : c.op[0]));
    const Axis a = axis_of(c.h, c.k, c.s, c.d, c.padding, c.op);
    EXPECT_EQ(a.out, c.keras);
    // The pads of the forward convolution of y give back x's length.
    const int64_t span = (c.k - 1) * c.d + 1;
    EXPECT_EQ((a.out + a.before + a.after - span) / c.s + 1, c.h);
  }
}

// pads: VALID none; SAME TF's SAME pads of the output (total = (H-1)*s + k - OH, the odd cell
// after), also where TF would refuse (even kernel, output_padding 0); EXPLICIT as given.
TEST(InferConvTranspose, PadsAreTheForwardConvolutions) {
  Axis a = axis_of(7, 3, 2, 1, "VALID", {});
  EXPECT_EQ(a.before, 0);
  EXPECT_EQ(a.after, 0);
  a = axis_of(7, 3, 2, 1, "SAME", {});  // OH 14: total 12 + 3 - 14 = 1
  EXPECT_EQ(a.before, 0);
  EXPECT_EQ(a.after, 1);
  a = axis_of(7, 4, 2, 1, "SAME", {});  // OH 14: total 2
  EXPECT_EQ(a.before, 1);
  EXPECT_EQ(a.after, 1);
  a = axis_of(7, 5, 1, 1, "SAME", {});  // OH 7: total 4
  EXPECT_EQ(a.before, 2);
  EXPECT_EQ(a.after, 2);
  a = axis_of(7, 2, 2, 1, "SAME", {0});  // OH 12: total 2, cropped both sides
  EXPECT_EQ(a.before, 1);
  EXPECT_EQ(a.after, 1);
  a = axis_of(3, 1, 3, 1, "SAME", {});  // k < s: OH 9, no pads
  EXPECT_EQ(a.out, 9);
  EXPECT_EQ(a.before, 0);
  EXPECT_EQ(a.after, 0);
  // ONNX ConvTranspose: (H-1)*s + k + op - before - after.
  a = axis_of(4, 3, 2, 1, "EXPLICIT", {1}, {1, 0, 2, 0});
  EXPECT_EQ(a.out, 6 + 3 + 1 - 1 - 2);
  EXPECT_EQ(a.before, 1);
  EXPECT_EQ(a.after, 2);
}

TEST(InferConvTranspose, ShapesInBothFormats) {
  // NHWC: x (N,H,W,Ci), w (KH,KW,Co,Ci) -> (N,OH,OW,Co)
  EXPECT_EQ(out_dims("conv2d_transpose", {f32({2, 7, 7, 16}), f32({3, 3, 8, 16})},
                     {{"strides", {2, 2}}, {"padding", "SAME"}}),
            (Dims{2, 14, 14, 8}));
  // NCHW: x (N,Ci,H,W) -> (N,Co,OH,OW); the filter layout is the same.
  EXPECT_EQ(out_dims("conv2d_transpose", {f32({2, 16, 7, 5}), f32({3, 2, 8, 16})},
                     {{"strides", {2, 1}}, {"data_format", "NCHW"}, {"output_padding", {1, 0}}}),
            (Dims{2, 8, 12 + 3 + 1, 4 + 2}));
  // Defaults: stride 1, VALID, no output padding: H + k - 1.
  EXPECT_EQ(out_dims("conv2d_transpose", {f32({1, 4, 5, 3}), f32({3, 2, 6, 3})}),
            (Dims{1, 6, 6, 6}));
}

// A normalised instance instantiates again unchanged (the gradient rule hands the forward
// attributes back); other pads than the rule's need EXPLICIT.
TEST(InferConvTranspose, NormalisedPadsRoundTrip) {
  const std::vector<TensorType> in = {f32({1, 4, 4, 2}), f32({4, 4, 3, 2})};
  Result<OpInstance> r =
      instantiate("conv2d_transpose", in, {{"strides", {2, 2}}, {"padding", "SAME"}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->attrs().at("pads").as_ints(), (Ints{1, 1, 1, 1}));
  Result<OpInstance> again = instantiate("conv2d_transpose", in, r->attrs());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->output(0).dims, r->output(0).dims);
  EXPECT_TRUE(invalid("conv2d_transpose", in,
                      {{"strides", {2, 2}}, {"padding", "SAME"}, {"pads", {0, 0, 1, 1}}},
                      {"conv2d_transpose: attribute 'pads' is (0,0,1,1), but padding \"SAME\" "
                       "gives (1,1,1,1); other pads need padding \"EXPLICIT\""}));
}

TEST(InferConvTranspose, Errors) {
  EXPECT_TRUE(invalid("conv2d_transpose", {f32({1, 4, 4, 5}), f32({3, 3, 2, 4})}, {},
                      {"conv2d_transpose: input 1 (w) has 4 channels in dim 3 (Ci), expected 5 to "
                       "match input 0 (x) dim 3"}));
  EXPECT_TRUE(invalid("conv2d_transpose", {f32({1, 5, 4, 4}), f32({3, 3, 2, 4})},
                      {{"data_format", "NCHW"}},
                      {"conv2d_transpose: input 1 (w) has 4 channels in dim 3 (Ci), expected 5 to "
                       "match input 0 (x) dim 1"}));
  EXPECT_TRUE(invalid("conv2d_transpose", {f32({4, 4, 4}), f32({3, 3, 2, 4})}, {},
                      {"conv2d_transpose: input 0 (x) must have rank 4 (N,H,W,C), got rank 3"}));
  EXPECT_TRUE(
      invalid("conv2d_transpose", {f32({1, 4, 4, 4}), f32({3, 2, 4})}, {},
              {"conv2d_transpose: input 1 (w) must have rank 4 (KH,KW,Co,Ci), got rank 3"}));
  EXPECT_TRUE(invalid(
      "conv2d_transpose", {f32({1, 4, 4, 4}), f32({3, 3, 2, 4})},
      {{"strides", {2, 2}}, {"output_padding", {1, 2}}},
      {"conv2d_transpose: attribute 'output_padding' is (1,2): its width value 2 must be smaller "
       "than the stride 2 (Keras' rule)"}));
  EXPECT_TRUE(invalid("conv2d_transpose", {f32({1, 4, 4, 4}), f32({3, 3, 2, 4})},
                      {{"output_padding", {0}}},
                      {"conv2d_transpose: attribute 'output_padding' is (0): expected () (none) "
                       "or 2 ints (h, w), got 1 ints"}));
  EXPECT_TRUE(invalid("conv2d_transpose", {f32({1, 4, 4, 4}), f32({3, 3, 2, 4})},
                      {{"output_padding", {-1, 0}}},
                      {"conv2d_transpose: attribute 'output_padding'"}));
  // Keras' SAME with an even kernel, stride 1 and output_padding 0 on a 1-high image: 0 rows.
  EXPECT_TRUE(invalid("conv2d_transpose", {f32({1, 1, 4, 4}), f32({2, 3, 2, 4})},
                      {{"padding", "SAME"}, {"output_padding", {0, 0}}},
                      {"conv2d_transpose: SAME output height would be 0 (input 1, kernel 2, "
                       "dilation 1, stride 1, output_padding 0)"}));
  EXPECT_TRUE(invalid("conv2d_transpose", {f32({1, 2, 4, 4}), f32({3, 3, 2, 4})},
                      {{"padding", "EXPLICIT"}, {"pads", {2, 0, 3, 0}}},
                      {"conv2d_transpose: EXPLICIT output height would be -1 (input 2, kernel 3, "
                       "dilation 1, stride 1, output_padding none, pads (2,3))"}));
}

}  // namespace
}  // namespace dlrt::ops
