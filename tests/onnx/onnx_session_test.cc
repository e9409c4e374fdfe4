// tests/onnx/onnx_session_test.cc: dlrt::InferenceSession and dlrt_session_* on models built
// here: numbers against host arithmetic, symbolic batch dims, value inputs, the load-time
// folding against the unfolded graph, and the refusals of hostile models.
#include <dlrt/context.hpp>
#include <dlrt/context_options.hpp>
#include <dlrt/inference_session.hpp>
#include <dlrt/tensor.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "onnx_model_builder.hpp"
#include "onnx_test_util.hpp"

namespace {

namespace fs = std::filesystem;
using dlrt::test::ModelBuilder;
using onnx::TensorProto;

dlrt::Context context() { return dlrt::test::onnx_test_context(); }
using dlrt::test::random_floats;

dlrt::InferenceSession session_of(const dlrt::Context& ctx, const ModelBuilder& b,
                                  const dlrt::SessionOptions& o = {}) {
  const std::string bytes = b.bytes();
  return dlrt::InferenceSession::from_bytes(ctx, bytes.data(), bytes.size(), o);
}

dlrt::Tensor host_tensor(const dlrt::Context& ctx, const std::vector<int64_t>& dims,
                         const std::vector<float>& v) {
  dlrt::Tensor t = dlrt::Tensor::create(ctx, ctx.find_device("CPU:0"), DLRT_F32, dims);
  t.write(v);
  return t;
}

// The code and message of what `fn` throws.
template <typename Fn>
std::pair<dlrt_code, std::string> error_of(Fn fn) {
  try {
    fn();
  } catch (const dlrt::Error& e) {
    return {e.code(), e.message()};
  }
  return {DLRT_OK, ""};
}

// y = relu(x W + b), x (N,3), W (3,2): N symbolic.
ModelBuilder gemm_relu() {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {-1, 3});
  b.init("W", {3, 2}, {1, -1, 2, 0.5f, -3, 1});
  b.init("b", {2}, {0.25f, -0.5f});
  b.node("Gemm", {"x", "W", "b"}, {"h"}, "dense");
  b.node("Relu", {"h"}, {"y"}, "act");
  b.output("y");
  return b;
}

std::vector<float> gemm_relu_host(const std::vector<float>& x) {
  const float W[3][2] = {{1, -1}, {2, 0.5f}, {-3, 1}}, bias[2] = {0.25f, -0.5f};
  std::vector<float> y;
  for (size_t r = 0; r < x.size() / 3; ++r)
    for (int j = 0; j < 2; ++j) {
      float s = bias[j];
      for (int k = 0; k < 3; ++k) s += x[r * 3 + k] * W[k][j];
      y.push_back(std::max(s, 0.0f));
    }
  return y;
}

TEST(OnnxSession, GemmReluRunsBatchOneAndFourFromOneSession) {
  dlrt::Context ctx = context();
  dlrt::InferenceSession s = session_of(ctx, gemm_relu());
  const auto ins = s.inputs();
  ASSERT_EQ(ins.size(), 1u);
  EXPECT_EQ(ins[0].name, "x");
  EXPECT_EQ(ins[0].dims, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(ins[0].dim_names, (std::vector<std::string>{"N", ""}));
  ASSERT_EQ(s.outputs().at(0).name, "y");
  for (int64_t n : {1, 4, 1}) {
    const std::vector<float> x = random_floats(static_cast<size_t>(n * 3), static_cast<uint32_t>(n));
    dlrt::Tensor xt = host_tensor(ctx, {n, 3}, x);
    std::vector<dlrt::Tensor> y = s.run({&xt});
    ASSERT_EQ(y.size(), 1u);
    EXPECT_EQ(y[0].dims(), (std::vector<int64_t>{n, 2}));
    const std::vector<float> got = y[0].read<float>(), want = gemm_relu_host(x);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
  }
  ASSERT_NE(s.executable(), nullptr);
  // Gemm + Relu became one fused op.
  EXPECT_NE(s.placement_log().find("matmul_bias_act"), std::string::npos) << s.placement_log();
}

TEST(OnnxSession, RunByNameNamesAMissingOrUnknownInput) {
  dlrt::Context ctx = context();
  dlrt::InferenceSession s = session_of(ctx, gemm_relu());
  dlrt::Tensor x = host_tensor(ctx, {2, 3}, random_floats(6, 1));
  std::map<std::string, dlrt::Tensor> out = s.run_named({{"x", &x}});
  EXPECT_EQ(out.count("y"), 1u);
  auto [code, msg] = error_of([&] { s.run_named({}); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("'x' is not given"), std::string::npos) << msg;
  std::tie(code, msg) = error_of([&] { s.run_named({{"x", &x}, {"z", &x}}); });
  EXPECT_NE(msg.find("no input 'z'"), std::string::npos) << msg;
}

TEST(OnnxSession, AWrongDtypeOrFixedDimIsRefusedNamingTheInput) {
  dlrt::Context ctx = context();
  dlrt::InferenceSession s = session_of(ctx, gemm_relu());
  dlrt::Tensor wrong_dim = host_tensor(ctx, {2, 4}, random_floats(8, 2));
  auto [code, msg] = error_of([&] { s.run({&wrong_dim}); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("input 'x' was given dims (2,4); the model wants (N,3)"), std::string::npos) << msg;
  dlrt::Tensor ints = dlrt::Tensor::create(ctx, 0, DLRT_I32, {2, 3});
  std::tie(code, msg) = error_of([&] { s.run({&ints}); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("input 'x' is i32; the model wants f32"), std::string::npos) << msg;
  // The session is still usable.
  dlrt::Tensor x = host_tensor(ctx, {1, 3}, {1, 2, 3});
  EXPECT_EQ(s.run({&x})[0].read<float>(), gemm_relu_host({1, 2, 3}));
}

// Conv (constant weights) -> BatchNormalization -> Relu: folded into one conv2d_bias_act;
// the same model imported without optimisations gives the same numbers.
TEST(OnnxSession, BatchNormFoldedIntoConvMatchesTheUnfoldedGraph) {
  ModelBuilder b(13);
  b.input("x", TensorProto::FLOAT, {-1, 2, 6, 6});
  b.init("W", {3, 2, 3, 3}, random_floats(54, 3));
  b.init("B", {3}, {0.1f, -0.2f, 0.3f});
  b.init("scale", {3}, {1.5f, 0.5f, -1.0f});
  b.init("bias", {3}, {0.0f, 0.1f, 0.2f});
  b.init("mean", {3}, {0.05f, -0.1f, 0.2f});
  b.init("var", {3}, {0.9f, 1.1f, 0.5f});
  auto* conv = b.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
  ModelBuilder::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  ModelBuilder::attr(conv, "strides", std::vector<int64_t>{2, 1});
  b.node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"n"}, "bn");
  b.node("Relu", {"n"}, {"y"});
  b.output("y");
  dlrt::Context ctx = context();
  dlrt::InferenceSession folded = session_of(ctx, b);
  dlrt::SessionOptions plain;
  plain.optimize = false;
  dlrt::InferenceSession unfolded = session_of(ctx, b, plain);
  dlrt::Tensor x = host_tensor(ctx, {2, 2, 6, 6}, random_floats(144, 4));
  const std::vector<float> a = folded.run({&x})[0].read<float>();
  const std::vector<float> c = unfolded.run({&x})[0].read<float>();
  ASSERT_EQ(a.size(), 2u * 3 * 3 * 6);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], c[i], 1e-5) << i;
  EXPECT_EQ(folded.placement_log().find("batch_norm"), std::string::npos) << folded.placement_log();
  EXPECT_NE(unfolded.placement_log().find("batch_norm"), std::string::npos);
}

// How many nodes of `op` a session's placement log lists ("name: (op): device", one a line).
size_t count_ops(const std::string& log, const std::string& op) {
  const std::string tag = "(" + op + ")";
  size_t n = 0;
  for (size_t at = log.find(tag); at != std::string::npos; at = log.find(tag, at + 1)) ++n;
  return n;
}

// A BatchNormalization exported as its scale and shift after a Conv (Conv -> Mul by a (C,1,1)
// constant -> Sub from a (1,C,1,1) constant, constant first -> Div by a scalar -> Relu ->
// MaxPool -> Conv), as densenet's light model has it: the chain stays NHWC, so the graph has
// only the input's transpose and the output's. The same model with the constants fed as
// inputs (not constants, so NCHW with a transpose around each conv) gives the same numbers.
TEST(OnnxSession, PerChannelConstantsKeepAConvChainNhwc) {
  auto model = [](bool constants) {
    ModelBuilder b(13);
    b.input("x", TensorProto::FLOAT, {-1, 2, 8, 8});
    b.init("W", {4, 2, 3, 3}, random_floats(72, 5));
    b.init("W2", {3, 4, 1, 1}, random_floats(12, 6));
    const std::vector<float> scale = {1.5f, 0.5f, -1.0f, 2.0f}, shift = {0.1f, -0.2f, 0.3f, 0.0f};
    if (constants) {
      b.init("scale", {4, 1, 1}, scale);
      b.init("shift", {1, 4, 1, 1}, shift);
      b.init("two", {}, {2.0f});
    } else {
      b.input("scale", TensorProto::FLOAT, {4, 1, 1});
      b.input("shift", TensorProto::FLOAT, {1, 4, 1, 1});
      b.input("two", TensorProto::FLOAT, {});
    }
    auto* conv = b.node("Conv", {"x", "W"}, {"c"}, "conv");
    ModelBuilder::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
    b.node("Mul", {"c", "scale"}, {"m"});
    b.node("Sub", {"shift", "m"}, {"s"});
    b.node("Div", {"s", "two"}, {"d"});
    b.node("Relu", {"d"}, {"r"});
    auto* pool = b.node("MaxPool", {"r"}, {"p"});
    ModelBuilder::attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
    ModelBuilder::attr(pool, "strides", std::vector<int64_t>{2, 2});
    b.node("Conv", {"p", "W2"}, {"y"}, "conv2");
    b.output("y");
    return b;
  };
  dlrt::Context ctx = context();
  dlrt::InferenceSession nhwc = session_of(ctx, model(true));
  dlrt::InferenceSession fed = session_of(ctx, model(false));
  dlrt::Tensor x = host_tensor(ctx, {2, 2, 8, 8}, random_floats(256, 7));
  dlrt::Tensor scale = host_tensor(ctx, {4, 1, 1}, {1.5f, 0.5f, -1.0f, 2.0f});
  dlrt::Tensor shift = host_tensor(ctx, {1, 4, 1, 1}, {0.1f, -0.2f, 0.3f, 0.0f});
  dlrt::Tensor two = host_tensor(ctx, {}, {2.0f});
  const std::vector<float> a = nhwc.run({&x})[0].read<float>();
  const std::vector<float> b = fed.run({&x, &scale, &shift, &two})[0].read<float>();
  ASSERT_EQ(a.size(), 2u * 3 * 4 * 4);
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << i;
  EXPECT_EQ(count_ops(nhwc.placement_log(), "transpose"), 2u) << nhwc.placement_log();
  EXPECT_GT(count_ops(fed.placement_log(), "transpose"), 2u) << fed.placement_log();
}

// ShuffleNet's channel shuffle between two convs (Reshape (N,C,H,W) -> (N,G,C/G,H,W),
// Transpose (0,2,1,3,4), Reshape back): done on the first conv's NHWC output as one transpose
// of the two channel axes, so the graph has three transposes (the input's, the shuffle, the
// output's) where it had five; the numbers equal the same model with the weights fed as
// inputs (no NHWC path at all).
TEST(OnnxSession, ChannelShuffleBetweenConvsStaysNhwc) {
  auto model = [](bool constants) {
    ModelBuilder b(13);
    b.input("x", TensorProto::FLOAT, {-1, 3, 5, 6});
    if (constants) {
      b.init("W", {6, 3, 3, 3}, random_floats(162, 8));
      b.init("W2", {4, 6, 1, 1}, random_floats(24, 9));
    } else {
      b.input("W", TensorProto::FLOAT, {6, 3, 3, 3});
      b.input("W2", TensorProto::FLOAT, {4, 6, 1, 1});
    }
    b.init_int64s("split", {5}, {0, 2, 3, 5, 6});
    b.init_int64s("merge", {4}, {0, 6, 5, 6});
    auto* conv = b.node("Conv", {"x", "W"}, {"c"}, "conv");
    ModelBuilder::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
    b.node("Reshape", {"c", "split"}, {"r"});
    auto* t = b.node("Transpose", {"r"}, {"t"});
    ModelBuilder::attr(t, "perm", std::vector<int64_t>{0, 2, 1, 3, 4});
    b.node("Reshape", {"t", "merge"}, {"s"});
    b.node("Conv", {"s", "W2"}, {"y"}, "conv2");
    b.output("y");
    return b;
  };
  dlrt::Context ctx = context();
  dlrt::InferenceSession nhwc = session_of(ctx, model(true));
  dlrt::InferenceSession fed = session_of(ctx, model(false));
  dlrt::Tensor x = host_tensor(ctx, {2, 3, 5, 6}, random_floats(180, 10));
  dlrt::Tensor w = host_tensor(ctx, {6, 3, 3, 3}, random_floats(162, 8));
  dlrt::Tensor w2 = host_tensor(ctx, {4, 6, 1, 1}, random_floats(24, 9));
  const std::vector<float> a = nhwc.run({&x})[0].read<float>();
  const std::vector<float> b = fed.run({&x, &w, &w2})[0].read<float>();
  ASSERT_EQ(a.size(), 2u * 4 * 5 * 6);
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << i;
  EXPECT_EQ(count_ops(nhwc.placement_log(), "transpose"), 3u) << nhwc.placement_log();
}

// A Transpose of a constant is done on the host at import (host_transpose, as every conv
// filter's OIHW -> HWIO): a (2,3,4) constant by perm (1,2,0), added to an input of zeros,
// gives the transposed elements in order.
TEST(OnnxSession, ConstantTransposedOnTheHost) {
  ModelBuilder b(13);
  b.input("x", TensorProto::FLOAT, {3, 4, 2});
  std::vector<float> k(24);
  for (int i = 0; i < 24; ++i) k[static_cast<size_t>(i)] = static_cast<float>(i);
  b.init("k", {2, 3, 4}, k);
  auto* t = b.node("Transpose", {"k"}, {"kt"});
  ModelBuilder::attr(t, "perm", std::vector<int64_t>{1, 2, 0});
  b.node("Add", {"x", "kt"}, {"y"});
  b.output("y");
  dlrt::Context ctx = context();
  dlrt::InferenceSession s = session_of(ctx, b);
  dlrt::Tensor x = host_tensor(ctx, {3, 4, 2}, std::vector<float>(24, 0.0f));
  const std::vector<float> y = s.run({&x})[0].read<float>();
  std::vector<float> want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int a = 0; a < 2; ++a) want.push_back(static_cast<float>(a * 12 + i * 4 + j));
  EXPECT_EQ(y, want);
}

// Reshape's shape fed at run time: the session specialises on the value.
TEST(OnnxSession, AShapeFedAsAnInputIsAValueTheGraphIsBuiltFor) {
  ModelBuilder b(13);
  b.input("x", TensorProto::FLOAT, {2, 6});
  b.input("shape", TensorProto::INT64, {2});
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y");
  dlrt::Context ctx = context();
  dlrt::InferenceSession s = session_of(ctx, b);
  std::vector<float> xs(12);
  for (int i = 0; i < 12; ++i) xs[i] = static_cast<float>(i);
  dlrt::Tensor x = host_tensor(ctx, {2, 6}, xs);
  for (std::vector<int64_t> shape : {std::vector<int64_t>{3, 4}, std::vector<int64_t>{-1, 2}}) {
    dlrt::Tensor st = dlrt::Tensor::create(ctx, 0, DLRT_I64, {2});
    st.write(shape);
    std::vector<dlrt::Tensor> y = s.run({&x, &st});
    EXPECT_EQ(y[0].dims()[1], shape[1]);
    EXPECT_EQ(y[0].read<float>(), xs);
  }
}

// The shape reaches Reshape through arithmetic (shape + [0, 1] - [0, 1], as an exporter's
// shape expressions do): the session still makes the fed input a value and folds the chain.
TEST(OnnxSession, AShapeComputedFromAnInputIsAValueToo) {
  ModelBuilder b(13);
  b.input("x", TensorProto::FLOAT, {2, 6});
  b.input("shape", TensorProto::INT64, {2});
  b.init_int64s("one", {2}, {0, 1});
  b.node("Add", {"shape", "one"}, {"bumped"});
  b.node("Sub", {"bumped", "one"}, {"target"});
  b.node("Reshape", {"x", "target"}, {"y"});
  b.output("y");
  dlrt::Context ctx = context();
  dlrt::InferenceSession s = session_of(ctx, b);
  std::vector<float> xs(12);
  for (int i = 0; i < 12; ++i) xs[i] = static_cast<float>(i);
  dlrt::Tensor x = host_tensor(ctx, {2, 6}, xs);
  for (std::vector<int64_t> shape : {std::vector<int64_t>{3, 4}, std::vector<int64_t>{6, 2}}) {
    dlrt::Tensor st = dlrt::Tensor::create(ctx, 0, DLRT_I64, {2});
    st.write(shape);
    std::vector<dlrt::Tensor> y = s.run({&x, &st});
    EXPECT_EQ(y[0].dims(), shape);
    EXPECT_EQ(y[0].read<float>(), xs);
  }
}

// Integer Mod runs on i64 graph values in integer arithmetic: exact where a double is not
// (2^62 + 7), Python's sign rule for fmod = 0, and 0 for a zero divisor (NumPy).
TEST(OnnxSession, IntegerModIsExactAndTakesTheDivisorsSign) {
  ModelBuilder b(13);
  b.input("a", TensorProto::INT64, {5});
  b.input("b", TensorProto::INT64, {5});
  b.node("Mod", {"a", "b"}, {"y"});
  b.output("y", TensorProto::INT64);
  dlrt::Context ctx = context();
  dlrt::InferenceSession s = session_of(ctx, b);
  const int64_t big = (int64_t{1} << 62) + 7;
  dlrt::Tensor a = dlrt::Tensor::create(ctx, 0, DLRT_I64, {5});
  dlrt::Tensor m = dlrt::Tensor::create(ctx, 0, DLRT_I64, {5});
  a.write(std::vector<int64_t>{big, -7, 7, -7, 5});
  m.write(std::vector<int64_t>{10, 3, -3, -3, 0});
  std::vector<dlrt::Tensor> y = s.run({&a, &m});
  EXPECT_EQ(y[0].read<int64_t>(), (std::vector<int64_t>{big % 10, 2, -2, -1, 0}));
}

// The 16-64-bit integers: initializers from ONNX's typed fields (UINT64 in uint64_data, INT16
// sign-extended in int32_data), arithmetic wrapping in the type (u64 past 2^64, i16 past
// 2^15), and the values exact where a double is not (2^63 + 5).
TEST(OnnxSession, WideIntegersReadFromTypedFieldsAndWrap) {
  ModelBuilder b(14);
  b.input("x", TensorProto::UINT64, {2});
  b.input("h", TensorProto::INT16, {2});
  auto* c = b.graph()->add_initializer();
  c->set_name("c");
  c->set_data_type(TensorProto::UINT64);
  c->add_dims(2);
  c->add_uint64_data(UINT64_MAX);
  c->add_uint64_data(1);
  auto* k = b.graph()->add_initializer();
  k->set_name("k");
  k->set_data_type(TensorProto::INT16);
  k->add_dims(2);
  k->add_int32_data(-3);
  k->add_int32_data(2);
  b.node("Add", {"x", "c"}, {"y"});
  b.node("Mul", {"h", "k"}, {"z"});
  b.output("y", TensorProto::UINT64);
  b.output("z", TensorProto::INT16);
  dlrt::Context ctx = context();
  dlrt::InferenceSession s = session_of(ctx, b);
  const uint64_t big = (uint64_t{1} << 63) + 5;
  dlrt::Tensor x = dlrt::Tensor::create(ctx, 0, DLRT_U64, {2});
  x.write(std::vector<uint64_t>{1, big});
  dlrt::Tensor h = dlrt::Tensor::create(ctx, 0, DLRT_I16, {2});
  h.write(std::vector<int16_t>{1000, 30000});
  std::vector<dlrt::Tensor> y = s.run({&x, &h});
  EXPECT_EQ(y[0].read<uint64_t>(), (std::vector<uint64_t>{0, big + 1}));
  // -3000, and 60000 - 65536
  EXPECT_EQ(y[1].read<int16_t>(), (std::vector<int16_t>{-3000, -5536}));
}

// Constants fold on the host as the device ops compute: a folded u16 Add wraps (65535 + 1 =
// 0), a folded Cast to u16 truncates and saturates (-1.5 -> 0, 70000 -> 65535, 2.9 -> 2).
TEST(OnnxSession, FoldedU16ArithmeticWrapsAndFoldedCastSaturates) {
  ModelBuilder b(13);
  b.input("x", TensorProto::UINT16, {3});
  b.init("f", {3}, {-1.5f, 70000.f, 2.9f});
  auto* cast = b.node("Cast", {"f"}, {"u"});
  ModelBuilder::attr(cast, "to", int64_t{TensorProto::UINT16});
  auto* one = b.graph()->add_initializer();
  one->set_name("one");
  one->set_data_type(TensorProto::UINT16);
  one->add_dims(3);
  for (int v : {1, 1, 1}) one->add_int32_data(v);
  b.node("Add", {"u", "one"}, {"u1"});  // {1, 0 (wrapped), 3}
  b.node("Add", {"x", "u1"}, {"y"});
  b.output("y", TensorProto::UINT16);
  dlrt::Context ctx = context();
  dlrt::InferenceSession s = session_of(ctx, b);
  dlrt::Tensor x = dlrt::Tensor::create(ctx, 0, DLRT_U16, {3});
  x.write(std::vector<uint16_t>{10, 20, 30});
  EXPECT_EQ(s.run({&x})[0].read<uint16_t>(), (std::vector<uint16_t>{11, 20, 33}));
}

// A Div of constants is folded on the host: floats divide as IEEE does (1/0 = inf, -1/0 = -inf,
// 0/0 = NaN), as the device's div would.
TEST(OnnxSession, FoldedFloatDivisionByZeroIsIeee) {
  ModelBuilder b(13);
  b.input("x", TensorProto::FLOAT, {3});
  b.init("num", {3}, {1.f, -1.f, 0.f});
  b.init("den", {3}, {0.f, 0.f, 0.f});
  b.node("Div", {"num", "den"}, {"q"});
  b.node("Add", {"x", "q"}, {"y"});
  b.output("y");
  dlrt::Context ctx = context();
  dlrt::InferenceSession s = session_of(ctx, b);
  dlrt::Tensor x = host_tensor(ctx, {3}, {2.f, 2.f, 2.f});
  const std::vector<float> y = s.run({&x})[0].read<float>();
  ASSERT_EQ(y.size(), 3u);
  EXPECT_TRUE(std::isinf(y[0]) && y[0] > 0) << y[0];
  EXPECT_TRUE(std::isinf(y[1]) && y[1] < 0) << y[1];
  EXPECT_TRUE(std::isnan(y[2])) << y[2];
}

// ReduceLogSumExp subtracts the max: inputs whose exp overflows f32 give a finite answer.
TEST(OnnxSession, ReduceLogSumExpOfLargeInputsIsFinite) {
  ModelBuilder b(18);
  b.input("x", TensorProto::FLOAT, {2, 2});
  b.node("ReduceLogSumExp", {"x"}, {"y"});
  b.output("y");
  dlrt::Context ctx = context();
  dlrt::InferenceSession s = session_of(ctx, b);
  dlrt::Tensor x = host_tensor(ctx, {2, 2}, {1000, 1000, -1000, -1000});
  std::vector<dlrt::Tensor> y = s.run({&x});
  const std::vector<float> got = y[0].read<float>();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NEAR(got[0], 1000.0 + std::log(2.0), 1e-3);
}

void expect_refused(const std::string& bytes, dlrt_code code, const std::string& words) {
  dlrt::Context ctx = context();
  auto [got, msg] = error_of([&] { dlrt::InferenceSession::from_bytes(ctx, bytes.data(), bytes.size()); });
  EXPECT_EQ(got, code) << msg;
  EXPECT_NE(msg.find(words), std::string::npos) << msg;
}

TEST(OnnxHostile, BytesThatAreNotAModel) {
  expect_refused("hello, not protobuf", DLRT_INVALID_ARGUMENT, "not an ONNX ModelProto");
  dlrt::Context ctx = context();
  auto [code, msg] = error_of([&] { dlrt::InferenceSession(ctx, "/nonexistent/model.onnx"); });
  EXPECT_EQ(code, DLRT_NOT_FOUND);
  EXPECT_NE(msg.find("/nonexistent/model.onnx"), std::string::npos);
}

TEST(OnnxHostile, ACycleIsNamed) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2});
  b.node("Add", {"x", "b2"}, {"a1"}, "first");
  b.node("Relu", {"a1"}, {"b2"}, "second");
  b.output("b2");
  expect_refused(b.bytes(), DLRT_INVALID_ARGUMENT, "the graph has a cycle");
}

TEST(OnnxHostile, AnUndefinedInputNameIsNamed) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2});
  b.node("Add", {"x", "ghost"}, {"y"}, "adder");
  b.output("y");
  expect_refused(b.bytes(), DLRT_INVALID_ARGUMENT, "node 'adder' (Add) reads 'ghost'");
}

TEST(OnnxHostile, AnUnknownOpsetOrDomainIsUnimplemented) {
  ModelBuilder newer(30);
  newer.input("x", TensorProto::FLOAT, {2});
  newer.node("Relu", {"x"}, {"y"});
  newer.output("y");
  expect_refused(newer.bytes(), DLRT_UNIMPLEMENTED, "opset 30");
  ModelBuilder other;
  other.model().add_opset_import()->set_domain("com.example");
  other.input("x", TensorProto::FLOAT, {2});
  other.node("Relu", {"x"}, {"y"}, "custom")->set_domain("com.example");
  other.output("y");
  expect_refused(other.bytes(), DLRT_UNIMPLEMENTED, "node 'custom' (Relu) is of domain 'com.example'");
  ModelBuilder unknown;
  unknown.input("x", TensorProto::FLOAT, {2});
  unknown.node("FrobnicateV2", {"x"}, {"y"}, "frob");
  unknown.output("y");
  expect_refused(unknown.bytes(), DLRT_UNIMPLEMENTED, "node 'frob' (FrobnicateV2): dlrt has no converter");
}

TEST(OnnxHostile, HugeInitializerHeadersAllocateNothing) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2});
  auto* t = b.graph()->add_initializer();  // 2^40 elements claimed, no data
  t->set_name("huge");
  t->set_data_type(TensorProto::FLOAT);
  t->add_dims(int64_t{1} << 20);
  t->add_dims(int64_t{1} << 20);
  b.node("Add", {"x", "huge"}, {"y"});
  b.output("y");
  expect_refused(b.bytes(), DLRT_INVALID_ARGUMENT, "initializer 'huge': dims (1048576,1048576) hold more than");
  ModelBuilder o;
  o.input("x", TensorProto::FLOAT, {2});
  auto* u = o.graph()->add_initializer();  // the product overflows int64
  u->set_name("overflow");
  u->set_data_type(TensorProto::FLOAT);
  for (int k = 0; k < 3; ++k) u->add_dims(int64_t{1} << 40);
  o.node("Add", {"x", "overflow"}, {"y"});
  o.output("y");
  expect_refused(o.bytes(), DLRT_INVALID_ARGUMENT, "initializer 'overflow'");
  ModelBuilder m;  // a raw_data size that does not match
  m.input("x", TensorProto::FLOAT, {2});
  auto* r = m.graph()->add_initializer();
  r->set_name("short");
  r->set_data_type(TensorProto::FLOAT);
  r->add_dims(2);
  r->set_raw_data(std::string(3, '\0'));
  m.node("Add", {"x", "short"}, {"y"});
  m.output("y");
  expect_refused(m.bytes(), DLRT_INVALID_ARGUMENT, "initializer 'short': raw_data has 3 bytes");
}

// A model file with one external-data initializer, written into a fresh folder.
fs::path external_model(const std::string& location, uint64_t length, const std::string& folder) {
  const fs::path dir = fs::temp_directory_path() / folder;
  fs::remove_all(dir);
  fs::create_directories(dir);
  const float w[2] = {2.0f, -3.0f};
  std::ofstream(dir / "weights.bin", std::ios::binary).write(reinterpret_cast<const char*>(w), sizeof w);
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {2});
  auto* t = b.graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(TensorProto::FLOAT);
  t->add_dims(2);
  t->set_data_location(TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  kv = t->add_external_data();
  kv->set_key("length");
  kv->set_value(std::to_string(length));
  b.node("Mul", {"x", "w"}, {"y"});
  b.output("y");
  std::ofstream(dir / "model.onnx", std::ios::binary) << b.bytes();
  return dir / "model.onnx";
}

TEST(OnnxHostile, ExternalDataIsReadOnlyFromInsideTheModelsFolder) {
  dlrt::Context ctx = context();
  {
    dlrt::InferenceSession s(ctx, external_model("weights.bin", 8, "dlrt_onnx_ext_ok").string());
    dlrt::Tensor x = host_tensor(ctx, {2}, {1.0f, 2.0f});
    EXPECT_EQ(s.run({&x})[0].read<float>(), (std::vector<float>{2.0f, -6.0f}));
  }
  auto [code, msg] = error_of([&] {
    dlrt::InferenceSession(ctx, external_model("../dlrt_onnx_ext_ok/weights.bin", 8, "dlrt_onnx_ext_up").string());
  });
  EXPECT_EQ(code, DLRT_PERMISSION_DENIED) << msg;
  EXPECT_NE(msg.find("initializer 'w': external data location '../dlrt_onnx_ext_ok/weights.bin' leaves the model's folder"),
            std::string::npos) << msg;
  std::tie(code, msg) = error_of([&] {
    dlrt::InferenceSession(ctx, external_model("/etc/passwd", 8, "dlrt_onnx_ext_abs").string());
  });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << msg;
  EXPECT_NE(msg.find("must be a path relative to the model's folder"), std::string::npos) << msg;
  std::tie(code, msg) = error_of([&] {
    dlrt::InferenceSession(ctx, external_model("weights.bin", 16, "dlrt_onnx_ext_len").string());
  });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << msg;
  EXPECT_NE(msg.find("external data length 16"), std::string::npos) << msg;
  // From bytes there is no folder: external data is refused.
  const fs::path p = external_model("weights.bin", 8, "dlrt_onnx_ext_bytes");
  std::ifstream in(p, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  expect_refused(bytes, DLRT_INVALID_ARGUMENT, "the model was given as bytes");
}

TEST(OnnxCApi, NullsAndIndicesAreErrorsNotCrashes) {
  dlrt::Context ctx = context();
  dlrt_session* s = nullptr;
  dlrt_status* st = dlrt_session_create_from_onnx_bytes(ctx.get(), nullptr, 3, nullptr, &s);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(dlrt_status_code(st), DLRT_INVALID_ARGUMENT);
  dlrt_status_free(st);
  dlrt_session_destroy(nullptr);
  const std::string bytes = gemm_relu().bytes();
  ASSERT_EQ(dlrt_session_create_from_onnx_bytes(ctx.get(), bytes.data(), bytes.size(), nullptr, &s), nullptr);
  dlrt_session_io io{};
  io.struct_size = DLRT_STRUCT_SIZE(dlrt_session_io);
  st = dlrt_session_input(s, 1, &io);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(dlrt_status_code(st), DLRT_OUT_OF_RANGE);
  dlrt_status_free(st);
  ASSERT_EQ(dlrt_session_output(s, 0, &io), nullptr);
  EXPECT_STREQ(io.name, "y");
  st = dlrt_session_run(s, nullptr, 1, nullptr, 1);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(dlrt_status_code(st), DLRT_INVALID_ARGUMENT);
  dlrt_status_free(st);
  dlrt_session_destroy(s);
}

}  // namespace
