// c_api_autodiff_test.cc: dlrt_graph_gradients through the C API — values out, errors as
// statuses with messages, out-parameters reset, the graph unchanged on failure.
#include <dlrt/dlrt.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "autodiff/host_eval.hpp"
#include "graph/graph_handle.hpp"

namespace {

// Code and message of a status, which is freed.
std::pair<dlrt_code, std::string> take(dlrt_status* s) {
  if (s == nullptr) return {DLRT_OK, ""};
  std::pair<dlrt_code, std::string> out{dlrt_status_code(s), dlrt_status_message(s)};
  dlrt_status_free(s);
  return out;
}

dlrt_tensor_desc desc(std::initializer_list<int64_t> dims) {
  dlrt_tensor_desc d{};
  d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  d.dtype = DLRT_F32;
  d.rank = int32_t(dims.size());
  int i = 0;
  for (int64_t v : dims) d.dims[i++] = v;
  d.layout = DLRT_LAYOUT_DENSE;
  return d;
}

class CApiGradients : public ::testing::Test {
 protected:
  void SetUp() override {
    dlrt_context_options o;
    dlrt_context_options_init(&o);
    o.search_default_paths = 0;  // no plugin needed to build graphs
    o.plugin_options = "";
    ASSERT_EQ(take(dlrt_context_create(&o, &ctx_)).first, DLRT_OK);
    ASSERT_EQ(take(dlrt_graph_create(ctx_, &g_)).first, DLRT_OK);
    dlrt_tensor_desc d = desc({2, 3});
    ASSERT_EQ(take(dlrt_graph_placeholder(g_, "x", &d, &x_)).first, DLRT_OK);
    t_ = op1("tanh", x_);
    loss_ = op1("reduce_sum", t_);
  }
  void TearDown() override {
    dlrt_graph_destroy(g_);
    dlrt_context_destroy(ctx_);
  }
  dlrt_value op1(const char* op, dlrt_value in) {
    dlrt_value out = DLRT_INVALID_VALUE;
    size_t n = 0;
    EXPECT_EQ(take(dlrt_graph_op(g_, op, nullptr, &in, 1, nullptr, 0, &out, 1, &n)).first, DLRT_OK);
    return out;
  }

  dlrt_context* ctx_ = nullptr;
  dlrt_graph* g_ = nullptr;
  dlrt_value x_ = DLRT_INVALID_VALUE, t_ = DLRT_INVALID_VALUE, loss_ = DLRT_INVALID_VALUE;
};

TEST_F(CApiGradients, GivesGradientValues) {
  dlrt_value wrt[2] = {x_, t_}, grads[2] = {0, 0};
  ASSERT_EQ(take(dlrt_graph_gradients(g_, loss_, wrt, 2, grads)),
            (std::pair<dlrt_code, std::string>{DLRT_OK, ""}));
  dlrt_tensor_desc d{};
  d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  ASSERT_EQ(take(dlrt_graph_value_desc(g_, grads[0], &d)).first, DLRT_OK);
  EXPECT_EQ(d.rank, 2);
  EXPECT_EQ(d.dims[0], 2);
  EXPECT_EQ(d.dims[1], 3);
  // d sum(tanh(x)) / dx = 1 - tanh(x)^2; d / d tanh(x) = 1.
  dlrt::core::testing::HostEval ev(*g_);
  const std::vector<double> xv = {-1.0, -0.5, 0.0, 0.25, 0.5, 2.0};
  ev.feed(dlrt::core::from_c(x_), xv);
  const std::vector<double> dx = ev.eval(dlrt::core::from_c(grads[0]));
  const std::vector<double> dt = ev.eval(dlrt::core::from_c(grads[1]));
  for (size_t i = 0; i < xv.size(); ++i) {
    EXPECT_NEAR(dx[i], 1 - std::tanh(xv[i]) * std::tanh(xv[i]), 1e-12);
    EXPECT_EQ(dt[i], 1.0);
  }
  // No wrt: nothing to do, nothing written.
  EXPECT_EQ(take(dlrt_graph_gradients(g_, loss_, nullptr, 0, nullptr)).first, DLRT_OK);
}

TEST_F(CApiGradients, ErrorsAreStatusesAndResetOutputs) {
  dlrt_value grads[1] = {42};
  auto [code, msg] = take(dlrt_graph_gradients(g_, t_, &x_, 1, grads));  // loss (2,3)
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("scalar"), std::string::npos) << msg;
  EXPECT_EQ(grads[0], DLRT_INVALID_VALUE);

  grads[0] = 42;
  EXPECT_EQ(take(dlrt_graph_gradients(nullptr, loss_, &x_, 1, grads)).first, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(grads[0], DLRT_INVALID_VALUE);
  EXPECT_EQ(take(dlrt_graph_gradients(g_, loss_, nullptr, 1, grads)).first, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_graph_gradients(g_, loss_, &x_, 1, nullptr)).first, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_graph_gradients(g_, DLRT_INVALID_VALUE, &x_, 1, grads)).first,
            DLRT_INVALID_ARGUMENT);

  // argmax on the path: UNIMPLEMENTED, graph unchanged.
  dlrt_value am = op1("argmax", x_);
  dlrt_attr dtype{};
  dtype.struct_size = DLRT_STRUCT_SIZE(dlrt_attr);
  dtype.name = "dtype";
  dtype.type = DLRT_ATTR_DTYPE;
  dtype.i = DLRT_F32;
  const dlrt_attr* attrs[] = {&dtype};
  dlrt_value cast = DLRT_INVALID_VALUE, sum = DLRT_INVALID_VALUE;
  size_t n = 0;
  ASSERT_EQ(take(dlrt_graph_op(g_, "cast", nullptr, &am, 1, attrs, 1, &cast, 1, &n)).first,
            DLRT_OK);
  ASSERT_EQ(take(dlrt_graph_op(g_, "reduce_sum", nullptr, &cast, 1, nullptr, 0, &sum, 1, &n)).first,
            DLRT_OK);
  const size_t nodes = static_cast<dlrt::core::Graph*>(g_)->nodes().size();
  auto [code2, msg2] = take(dlrt_graph_gradients(g_, sum, &x_, 1, grads));
  EXPECT_EQ(code2, DLRT_UNIMPLEMENTED);
  EXPECT_NE(msg2.find("argmax"), std::string::npos) << msg2;
  EXPECT_EQ(static_cast<dlrt::core::Graph*>(g_)->nodes().size(), nodes);
}

}  // namespace
