// op_view_test.cc: plugins/common/op_view.hpp: operand copies, typed attribute getters and
// their errors, windows from explicit pads, image indexing, broadcasting. These tests read
// hand-built descriptors as they are (raw_view), without the op schema in between.
#include "op_view.hpp"

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace {

using dlrt::plugin::Error;
using dlrt::reference::testing::TestOp;

TEST(OpView, CopiesOperandsAndAttributes) {
  TestOp t("conv2d");
  t.in(DLRT_F32, {2, 5, 5, 3}).in(DLRT_F32, {3, 3, 3, 4}).out(DLRT_F32, {2, 3, 3, 4});
  t.ints("strides", {2, 2})
      .str("padding", "SAME")
      .i("n", 7)
      .f("x", 0.5)
      .b("flag", true)
      .dtype("dtype", DLRT_I64);
  dlrt::plugin::OpView v = t.raw_view();
  EXPECT_EQ(v.name(), "conv2d");
  ASSERT_EQ(v.num_inputs(), 2u);
  EXPECT_EQ(v.input(0).dims, (std::vector<int64_t>{2, 5, 5, 3}));
  EXPECT_EQ(v.input(0).numel, 150);
  EXPECT_EQ(v.input(0).bytes, 600u);
  EXPECT_EQ(v.output(0).dim(-1), 4);
  EXPECT_EQ(v.get_ints("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(v.get_string("padding"), "SAME");
  EXPECT_EQ(v.get_int("n"), 7);
  EXPECT_EQ(v.get_float("x"), 0.5);
  EXPECT_EQ(v.get_float("n"), 7.0);  // int widens to float
  EXPECT_TRUE(v.get_bool("flag"));
  EXPECT_EQ(v.get_dtype("dtype"), DLRT_I64);
}

TEST(OpView, MissingOrMistypedAttributeNamesOpAndAttribute) {
  TestOp t("max_pool2d");
  t.in(DLRT_F32, {1, 2, 2, 1}).out(DLRT_F32, {1, 1, 1, 1}).str("padding", "VALID");
  dlrt::plugin::OpView v = t.raw_view();
  try {
    v.get_ints("ksize");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("max_pool2d"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ksize"), std::string::npos) << e.what();
  }
  try {
    v.get_int("padding");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("padding"), std::string::npos) << e.what();
  }
  EXPECT_THROW(v.input(1), Error);
}

// The window comes from the core's "pads" (h_before, w_before, h_after, w_after) and the
// output length the core inferred; a descriptor without pads (a pre-1.2 host) is declined.
TEST(OpView, WindowsFromExplicitPads) {
  TestOp t("max_pool2d");
  t.in(DLRT_F32, {1, 6, 5, 1}).out(DLRT_F32, {1, 3, 3, 1}).ints("pads", {0, 1, 1, 1});
  dlrt::plugin::OpView v = t.raw_view();
  auto h = dlrt::plugin::window_of(v, 0, 6, 3, 2, 1, 3);
  EXPECT_EQ(h.pad_before, 0);
  EXPECT_EQ(h.pad_after, 1);
  EXPECT_EQ(h.out, 3);
  EXPECT_EQ(h.input_at(2, 2), 6);  // o*stride - before + t*dilation, in the padding
  auto w = dlrt::plugin::window_of(v, 1, 5, 3, 2, 2, 3);
  EXPECT_EQ(w.pad_before, 1);
  EXPECT_EQ(w.pad_after, 1);
  EXPECT_EQ(w.input_at(0, 0), -1);
  EXPECT_EQ(w.input_at(1, 2), 5);  // dilation 2: taps 2 apart

  TestOp old("max_pool2d");
  old.in(DLRT_F32, {1, 6, 5, 1}).out(DLRT_F32, {1, 3, 3, 1}).str("padding", "SAME");
  dlrt::plugin::OpView ov = old.raw_view();
  try {
    dlrt::plugin::window_of(ov, 0, 6, 3, 2, 1, 3);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), DLRT_UNIMPLEMENTED);
    EXPECT_NE(std::string(e.what()).find("pads"), std::string::npos) << e.what();
  }
}

TEST(OpView, ImageIndexing) {
  auto nhwc = dlrt::plugin::image_shape(std::vector<int64_t>{2, 3, 4, 5}, false);
  EXPECT_EQ(nhwc.h, 3);
  EXPECT_EQ(nhwc.c, 5);
  EXPECT_EQ(nhwc.index(1, 2, 3, 4), 2 * 3 * 4 * 5 - 1);
  EXPECT_EQ(nhwc.index(0, 0, 1, 0), 5);
  auto nchw = dlrt::plugin::image_shape(std::vector<int64_t>{2, 5, 3, 4}, true);
  EXPECT_EQ(nchw.c, 5);
  EXPECT_EQ(nchw.h, 3);
  EXPECT_EQ(nchw.index(0, 1, 0, 0), 4);  // (n,h,w,c): one row is W = 4
  EXPECT_EQ(nchw.index(0, 0, 1, 0), 1);
  EXPECT_EQ(nchw.index(0, 0, 0, 1), 12);  // one channel plane is H*W = 12
  EXPECT_EQ(nchw.index(1, 2, 3, 4), 2 * 3 * 4 * 5 - 1);
  EXPECT_EQ(nchw.dims(), (std::vector<int64_t>{2, 5, 3, 4}));
}

TEST(OpView, Broadcasting) {
  EXPECT_EQ(dlrt::plugin::broadcast_strides({4, 1}, {3, 4, 5}, "op"),
            (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(dlrt::plugin::broadcast_strides({3, 1, 5}, {3, 4, 5}, "op"),
            (std::vector<int64_t>{5, 0, 1}));
  EXPECT_EQ(dlrt::plugin::dtype_size(DLRT_I64), 8u);
  EXPECT_EQ(dlrt::plugin::dtype_size(DLRT_U8), 1u);
  EXPECT_EQ(dlrt::plugin::normalize_axis(-1, 3, "op"), 2);
  EXPECT_THROW(dlrt::plugin::normalize_axis(3, 3, "op"), Error);
}

}  // namespace
