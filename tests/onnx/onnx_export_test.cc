// tests/onnx/onnx_export_test.cc: nn::Model::save_onnx written, read back by dlrt's own
// importer (InferenceSession) and checked against Model::predict on the same rows; u8
// inputs keep the model's /255 scaling; an op without an ONNX form is named; a raw graph's
// grid_sample (NHWC) becomes Transposes around an ONNX GridSample.
#include <dlrt/context.hpp>
#include <dlrt/context_options.hpp>
#include <dlrt/graph.hpp>
#include <dlrt/inference_session.hpp>
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "onnx_test_util.hpp"

namespace {

namespace nn = dlrt::nn;
namespace fs = std::filesystem;

dlrt::Context context() { return dlrt::test::onnx_test_context(); }
using dlrt::test::random_floats;

// The session's output for `rows` rows of x (f32 or u8 bytes as given).
std::vector<float> run_session(const dlrt::Context& ctx, const std::string& path, dlrt_dtype dtype,
                               const std::vector<int64_t>& dims, const void* data, size_t bytes) {
  dlrt::InferenceSession s(ctx, path);
  EXPECT_EQ(s.inputs().at(0).name, "input");
  EXPECT_EQ(s.inputs().at(0).dim_names.at(0), "N");
  dlrt::Tensor x = dlrt::Tensor::create(ctx, ctx.find_device("CPU:0"), dtype, dims);
  dlrt::check(dlrt_tensor_write(x.get(), data, bytes));
  return s.run({&x}).at(0).read<float>();
}

TEST(OnnxExport, ACnnWithBatchNormRoundTripsThroughDlrtsImporter) {
  dlrt::Context ctx = context();
  nn::Sequential m(ctx, {nn::Input({8, 8, 2}), nn::Conv2D(4, {3, 3}, "relu"), nn::BatchNormalization(),
                         nn::MaxPool2D({2, 2}), nn::Conv2D(3, {3, 3}), nn::Flatten(), nn::Dropout(0.5),
                         nn::Dense(5, "relu"), nn::Dense(3)});
  m.compile(nn::Adam(1e-2), nn::SparseCategoricalCrossentropy(true));
  // A few steps, so the moving statistics and weights are not their initial values.
  const int64_t n = 16;
  nn::Array x = nn::Array::of<float>({n, 8, 8, 2}, random_floats(size_t(n * 128), 1));
  std::vector<int32_t> labels(n);
  for (int64_t i = 0; i < n; ++i) labels[i] = int32_t(i % 3);
  nn::FitOptions fit;
  fit.epochs = 2;
  fit.batch_size = 8;
  fit.progress.verbose = 0;
  m.fit(x, nn::Array::of<int32_t>({n}, labels), fit);
  const fs::path path = fs::temp_directory_path() / "dlrt_export_cnn.onnx";
  m.save_onnx(path.string());
  const std::vector<float> want = m.predict(x).values<float>();
  const std::vector<float> got =
      run_session(ctx, path.string(), DLRT_F32, {n, 8, 8, 2}, x.data(), x.bytes().size());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
}

TEST(OnnxExport, U8InputsKeepTheModelsScaling) {
  dlrt::Context ctx = context();
  nn::Sequential m(ctx, {nn::Input({4, 4, 1}), nn::Conv2D(2, {3, 3}, "relu"), nn::Flatten(), nn::Dense(2)});
  m.compile(nn::Adam(), nn::SparseCategoricalCrossentropy(true));
  std::vector<uint8_t> pixels(3 * 16);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = uint8_t(i * 37 % 256);
  nn::Array x(DLRT_U8, {3, 4, 4, 1}, pixels);
  const fs::path path = fs::temp_directory_path() / "dlrt_export_u8.onnx";
  m.save_onnx(path.string(), DLRT_U8);
  const std::vector<float> want = m.predict(x).values<float>();
  const std::vector<float> got = run_session(ctx, path.string(), DLRT_U8, {3, 4, 4, 1}, pixels.data(), pixels.size());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}

// A graph of one NHWC grid_sample, exported through the C API and read back: the session's
// output (Transpose, GridSample, Transpose) is the op's own, in every mode.
TEST(OnnxExport, GridSampleRoundTripsThroughGridSample) {
  dlrt::Context ctx = context();
  const size_t cpu = ctx.find_device("CPU:0");
  dlrt::Tensor x = dlrt::Tensor::create(ctx, cpu, DLRT_F32, {2, 5, 6, 3});
  x.write(random_floats(2 * 5 * 6 * 3, 11));
  std::vector<float> points = random_floats(2 * 4 * 3 * 2, 12);
  for (float& p : points) p *= 1.3f;  // some points outside the image
  dlrt::Tensor grid = dlrt::Tensor::create(ctx, cpu, DLRT_F32, {2, 4, 3, 2});
  grid.write(points);
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    SCOPED_TRACE(mode);
    const dlrt::OpAttrs attrs = {{"mode", mode}, {"padding_mode", "reflection"}, {"align_corners", true}};
    dlrt::Graph g(ctx);
    dlrt::Value xv = g.placeholder("x", DLRT_F32, {2, 5, 6, 3});
    dlrt::Value gv = g.placeholder("grid", DLRT_F32, {2, 4, 3, 2});
    dlrt::Value y = g.op1("grid_sample", {xv, gv}, attrs);
    const fs::path path = fs::temp_directory_path() / "dlrt_export_grid_sample.onnx";
    const dlrt_value ins[] = {xv.get(), gv.get()}, outs[] = {y.get()};
    const char* in_names[] = {"x", "grid"};
    const char* out_names[] = {"y"};
    dlrt::check(dlrt_graph_export_onnx(g.get(), ins, in_names, 2, outs, out_names, 1, 0,
                                       path.string().c_str()));
    dlrt::InferenceSession s(ctx, path.string());
    const std::vector<float> got = s.run({&x, &grid}).at(0).read<float>();
    const std::vector<float> want = ctx.run_op("grid_sample", cpu, {x, grid}, attrs)[0].read<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
  }
}

}  // namespace
