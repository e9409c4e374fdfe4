// eager_hpp_test.cc: dlrt.hpp's Tensor and Context::run_op / op_probe / op_supported over the
// same plugins as eager_test.cc.
#include <dlrt/dlrt.hpp>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

dlrt::Context make_context(const std::string& plugin_options = "") {
  return dlrt::Context(dlrt::ContextOptions()
                           .plugin_path(DLRT_TEST_PLUGIN_DIR)
                           .search_default_paths(false)
                           .visible_devices("")
                           .plugin_options(plugin_options));
}

TEST(EagerHpp, TensorRoundTripAndRunOp) {
  dlrt::Context ctx = make_context();
  for (const char* spec : {"CPU:0", "REF:0"}) {
    SCOPED_TRACE(spec);
    const size_t dev = ctx.find_device(spec);
    dlrt::Tensor x = dlrt::Tensor::create(ctx, dev, DLRT_F32, {2, 3});
    EXPECT_EQ(x.dims(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(x.dtype(), DLRT_F32);
    EXPECT_EQ(x.device(), dev);
    EXPECT_EQ(x.byte_size(), 24u);
    x.write(std::vector<float>{1, -2, 3, -4, 5, -6});
    EXPECT_EQ(x.read<float>(), (std::vector<float>{1, -2, 3, -4, 5, -6}));

    std::vector<dlrt::Tensor> y = ctx.run_op("relu", dev, {x});
    ASSERT_EQ(y.size(), 1u);
    EXPECT_EQ(y[0].read<float>(), (std::vector<float>{1, 0, 3, 0, 5, 0}));

    dlrt::Tensor w = dlrt::Tensor::create(ctx, dev, DLRT_F32, {3, 2});
    w.write(std::vector<float>{1, 0, 0, 1, 1, 1});
    dlrt::Tensor c = std::move(ctx.run_op("matmul", dev, {x, w}, {{"transpose_a", false}})[0]);
    EXPECT_EQ(c.dims(), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(c.read<float>(), (std::vector<float>{4, 1, -10, -1}));

    // Two outputs, and writing into caller tensors.
    dlrt::Tensor labels = dlrt::Tensor::create(ctx, dev, DLRT_I32, {2});
    labels.write(std::vector<int32_t>{0, 2});
    EXPECT_EQ(ctx.run_op("sparse_softmax_cross_entropy", dev, {x, labels}).size(), 2u);
    dlrt::Tensor into = dlrt::Tensor::create(ctx, dev, DLRT_F32, {2, 3});
    ctx.run_op_into("neg", dev, {x}, {into});
    EXPECT_EQ(into.read<float>(), (std::vector<float>{-1, 2, -3, 4, -5, 6}));
  }
}

TEST(EagerHpp, ErrorsThrowAndAnswersDoNot) {
  dlrt::Context ctx = make_context("reference:ops=relu");
  const size_t ref = ctx.find_device("REF:0");
  dlrt::Tensor x = dlrt::Tensor::create(ctx, ref, DLRT_F32, {4});
  try {
    ctx.run_op("sigmoid", ref, {x});
    FAIL() << "sigmoid ran on a device restricted to relu";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_UNIMPLEMENTED) << e.what();
  }
  try {
    ctx.run_op("relu", ref, {x}, {{"alpha", 0.5}});
    FAIL() << "an unknown attribute was accepted";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT) << e.what();
  }
  EXPECT_TRUE(ctx.op_probe("relu", ref));
  dlrt::OpSupport no = ctx.op_probe("sigmoid", ref);
  EXPECT_FALSE(no);
  EXPECT_EQ(no.code, DLRT_UNIMPLEMENTED);
  EXPECT_NE(no.reason.find("sigmoid on /device:REF:0"), std::string::npos) << no.reason;
  EXPECT_FALSE(ctx.op_supported("sigmoid", ref, {x.desc()}));
  EXPECT_THROW(ctx.op_supported("conv3d", ref, {x.desc()}), dlrt::Error);
  EXPECT_EQ(ctx.op_infer("flatten", {dlrt::detail::dense_desc(DLRT_F32, {2, 3, 4})})[0].dims[1],
            12);
  const std::vector<dlrt::OpInfo> ops = dlrt::op_list();
  EXPECT_EQ(ops.size(), dlrt_op_count());
  EXPECT_EQ(ops.front().name, dlrt_op_name(0));
}

}  // namespace
