// c_api_graph_test.cc: the dlrt_graph_* builder functions of dlrt.h (c_api_graph.cc) — NULL
// and bad arguments, attributes through dlrt_attr, output room, value queries, scopes, and
// variable contents through variable_read/write on the real plugins of this build tree.
#include <dlrt/dlrt.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

// Owns a status for one assertion: code and message, then freed.
struct Result {
  dlrt_code code;
  std::string message;
};
Result take(dlrt_status* s) {
  Result r{dlrt_status_code(s), s != nullptr ? dlrt_status_message(s) : ""};
  dlrt_status_free(s);
  return r;
}
#define EXPECT_OK(call)                        \
  do {                                         \
    Result r_ = take(call);                    \
    EXPECT_EQ(r_.code, DLRT_OK) << r_.message; \
  } while (0)

dlrt_tensor_desc desc(dlrt_dtype dtype, std::vector<int64_t> dims) {
  dlrt_tensor_desc d{};
  d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  d.dtype = dtype;
  d.rank = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) d.dims[i] = dims[i];
  return d;
}

dlrt_attr float_attr(const char* name, double f) {
  dlrt_attr a{};
  a.struct_size = DLRT_STRUCT_SIZE(dlrt_attr);
  a.name = name;
  a.type = DLRT_ATTR_FLOAT;
  a.f = f;
  return a;
}
dlrt_attr int_attr(const char* name, int64_t i) {
  dlrt_attr a = float_attr(name, 0);
  a.type = DLRT_ATTR_INT;
  a.i = i;
  return a;
}

class CApiGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    dlrt_context_options o;
    dlrt_context_options_init(&o);
    const char* paths[] = {DLRT_TEST_PLUGIN_DIR};
    o.plugin_paths = paths;
    o.num_plugin_paths = 1;
    o.search_default_paths = 0;
    o.plugin_options = "";
    o.visible_devices = "";
    ASSERT_EQ(take(dlrt_context_create(&o, &ctx_)).code, DLRT_OK);
    ASSERT_EQ(take(dlrt_graph_create(ctx_, &g_)).code, DLRT_OK);
  }
  void TearDown() override {
    dlrt_graph_destroy(g_);  // before the context, as dlrt.h says
    dlrt_context_destroy(ctx_);
  }
  dlrt_context* ctx_ = nullptr;
  dlrt_graph* g_ = nullptr;
};

TEST_F(CApiGraph, NullArgumentsAreInvalid) {
  dlrt_graph* g = reinterpret_cast<dlrt_graph*>(0x1);
  EXPECT_EQ(take(dlrt_graph_create(nullptr, &g)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(g, nullptr);  // reset on entry
  EXPECT_EQ(take(dlrt_graph_create(ctx_, nullptr)).code, DLRT_INVALID_ARGUMENT);
  const dlrt_tensor_desc d = desc(DLRT_F32, {2});
  dlrt_value v = 0;
  Result r = take(dlrt_graph_placeholder(g_, nullptr, &d, &v));
  EXPECT_EQ(r.code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(r.message.find("name is NULL"), std::string::npos) << r.message;
  EXPECT_EQ(v, DLRT_INVALID_VALUE);
  EXPECT_EQ(take(dlrt_graph_placeholder(nullptr, "x", &d, &v)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_graph_placeholder(g_, "x", nullptr, &v)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_graph_constant(g_, "c", &d, nullptr, 8, &v)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_graph_variable(g_, "w", &d, nullptr, nullptr, 0, 1, &v)).code,
            DLRT_INVALID_ARGUMENT);
  size_t n = 0;
  EXPECT_EQ(take(dlrt_graph_op(g_, "relu", nullptr, nullptr, 1, nullptr, 0, &v, 1, &n)).code,
            DLRT_INVALID_ARGUMENT);  // one input, NULL array
  EXPECT_EQ(take(dlrt_graph_op(g_, nullptr, nullptr, nullptr, 0, nullptr, 0, &v, 1, &n)).code,
            DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_graph_push_device(g_, nullptr)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_graph_pop_device(nullptr)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_graph_find(g_, nullptr, &v)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take(dlrt_graph_value_desc(g_, 0, nullptr)).code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(dlrt_graph_trainable_variables(nullptr, nullptr, 0), 0u);
  dlrt_graph_destroy(nullptr);
}

TEST_F(CApiGraph, BuildsWithAttributesAndQueriesValues) {
  const dlrt_tensor_desc xd = desc(DLRT_F32, {2, 8, 8, 3});
  dlrt_value x = 0, w = 0;
  EXPECT_OK(dlrt_graph_placeholder(g_, "x", &xd, &x));
  const dlrt_tensor_desc wd = desc(DLRT_F32, {3, 3, 3, 4});
  const dlrt_attr lo = float_attr("minval", -1), hi = float_attr("maxval", 1),
                  seed = int_attr("seed", 3);
  const dlrt_attr* init[] = {&lo, &hi, &seed};
  EXPECT_OK(dlrt_graph_variable(g_, "w", &wd, "random_uniform", init, 3, 1, &w));

  dlrt_attr padding{};
  padding.struct_size = DLRT_STRUCT_SIZE(dlrt_attr);
  padding.name = "padding";
  padding.type = DLRT_ATTR_STRING;
  padding.s = "SAME";
  const dlrt_attr* attrs[] = {&padding};
  const dlrt_value in[] = {x, w};
  dlrt_value y[2] = {0, 0};
  size_t n = 0;
  EXPECT_OK(dlrt_graph_op(g_, "conv2d", nullptr, in, 2, attrs, 1, y, 2, &n));
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(y[1], DLRT_INVALID_VALUE);
  dlrt_tensor_desc yd{};
  yd.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  EXPECT_OK(dlrt_graph_value_desc(g_, y[0], &yd));
  EXPECT_EQ(yd.dtype, DLRT_F32);
  ASSERT_EQ(yd.rank, 4);
  EXPECT_EQ(yd.dims[1], 8);  // SAME
  EXPECT_EQ(yd.dims[3], 4);
  EXPECT_EQ(yd.struct_size, DLRT_STRUCT_SIZE(dlrt_tensor_desc));

  // The auto name, found by name; a bad value is named.
  dlrt_value found = 0;
  EXPECT_OK(dlrt_graph_find(g_, "conv2d", &found));
  EXPECT_EQ(found, y[0]);
  Result missing = take(dlrt_graph_find(g_, "conv2d:1", &found));
  EXPECT_EQ(missing.code, DLRT_NOT_FOUND);
  EXPECT_NE(missing.message.find("conv2d:1"), std::string::npos) << missing.message;
  EXPECT_EQ(found, DLRT_INVALID_VALUE);
  EXPECT_EQ(take(dlrt_graph_value_desc(g_, (dlrt_value(77) << 32), &yd)).code,
            DLRT_INVALID_ARGUMENT);

  // A shape error comes back with the registry's words.
  const dlrt_value bad_in[] = {w, x};
  Result shape = take(dlrt_graph_op(g_, "conv2d", "bad", bad_in, 2, nullptr, 0, y, 2, &n));
  EXPECT_EQ(shape.code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(shape.message.rfind("conv2d: ", 0), 0u) << shape.message;
  EXPECT_EQ(n, 0u);

  // Two outputs, room for one: refused before anything is added.
  const dlrt_tensor_desc ld = desc(DLRT_F32, {4, 10}), labd = desc(DLRT_I32, {4});
  dlrt_value logits = 0, labels = 0;
  EXPECT_OK(dlrt_graph_placeholder(g_, "logits", &ld, &logits));
  EXPECT_OK(dlrt_graph_placeholder(g_, "labels", &labd, &labels));
  const dlrt_value xent_in[] = {logits, labels};
  Result room = take(
      dlrt_graph_op(g_, "sparse_softmax_cross_entropy", "xent", xent_in, 2, nullptr, 0, y, 1, &n));
  EXPECT_EQ(room.code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(room.message.find("room for 1"), std::string::npos) << room.message;
  EXPECT_EQ(take(dlrt_graph_find(g_, "xent", &found)).code, DLRT_NOT_FOUND);
  EXPECT_OK(
      dlrt_graph_op(g_, "sparse_softmax_cross_entropy", "xent", xent_in, 2, nullptr, 0, y, 2, &n));
  EXPECT_EQ(n, 2u);
  EXPECT_OK(dlrt_graph_find(g_, "xent:1", &found));
  EXPECT_EQ(found, y[1]);

  // An attribute given twice is refused by name.
  const dlrt_attr* twice[] = {&padding, &padding};
  Result dup = take(dlrt_graph_op(g_, "max_pool2d", nullptr, &x, 1, twice, 2, y, 2, &n));
  EXPECT_EQ(dup.code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(dup.message.find("'padding' is given twice"), std::string::npos) << dup.message;
}

// Variadic ops through the C API: concat takes any number of inputs; split's output count
// comes from its attributes, and a short `outputs` array is refused before anything is added.
TEST_F(CApiGraph, VariadicInputsAndOutputs) {
  const dlrt_tensor_desc ad = desc(DLRT_F32, {2, 3}), bd = desc(DLRT_F32, {2, 5});
  dlrt_value a = 0, b = 0;
  EXPECT_OK(dlrt_graph_placeholder(g_, "a", &ad, &a));
  EXPECT_OK(dlrt_graph_placeholder(g_, "b", &bd, &b));
  const dlrt_attr axis = int_attr("axis", -1);
  const dlrt_attr* concat_attrs[] = {&axis};
  const dlrt_value three[] = {a, b, a};
  dlrt_value y[4] = {0, 0, 0, 0};
  size_t n = 0;
  EXPECT_OK(dlrt_graph_op(g_, "concat", "cat", three, 3, concat_attrs, 1, y, 1, &n));
  ASSERT_EQ(n, 1u);
  dlrt_tensor_desc yd{};
  yd.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  EXPECT_OK(dlrt_graph_value_desc(g_, y[0], &yd));
  ASSERT_EQ(yd.rank, 2);
  EXPECT_EQ(yd.dims[1], 11);

  const dlrt_attr num = int_attr("num", 3), split_axis = int_attr("axis", 1);
  const dlrt_attr* split_attrs[] = {&num, &split_axis};
  const dlrt_value cat = y[0];
  dlrt_value parts[4] = {0, 0, 0, 0};
  // 11 is not a multiple of 3: the registry's message, whatever the room.
  Result uneven = take(dlrt_graph_op(g_, "split", "parts", &cat, 1, split_attrs, 2, parts, 1, &n));
  EXPECT_EQ(uneven.code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(uneven.message.find("does not divide"), std::string::npos) << uneven.message;
  const int64_t lengths[] = {3, 5, 3};
  dlrt_attr sizes = int_attr("sizes", 0);
  sizes.type = DLRT_ATTR_INTS;
  sizes.ints = lengths;
  sizes.count = 3;
  const dlrt_attr* sized[] = {&sizes, &split_axis};
  Result short_room = take(dlrt_graph_op(g_, "split", "parts", &cat, 1, sized, 2, parts, 2, &n));
  EXPECT_EQ(short_room.code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(short_room.message.find("has 3 output(s), but `outputs` has room for 2"),
            std::string::npos)
      << short_room.message;
  dlrt_value found = 0;
  EXPECT_EQ(take(dlrt_graph_find(g_, "parts", &found)).code, DLRT_NOT_FOUND);
  EXPECT_OK(dlrt_graph_op(g_, "split", "parts", &cat, 1, sized, 2, parts, 4, &n));
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(parts[3], DLRT_INVALID_VALUE);
  EXPECT_OK(dlrt_graph_value_desc(g_, parts[1], &yd));
  EXPECT_EQ(yd.dims[1], 5);
}

TEST_F(CApiGraph, ScopesAssignsAndTrainableVariables) {
  EXPECT_OK(dlrt_graph_push_device(g_, "/CPU:0"));
  EXPECT_EQ(take(dlrt_graph_push_device(g_, "/device:CPU:zero")).code, DLRT_INVALID_ARGUMENT);
  EXPECT_OK(dlrt_graph_pop_device(g_));
  EXPECT_EQ(take(dlrt_graph_pop_device(g_)).code, DLRT_FAILED_PRECONDITION);

  const dlrt_tensor_desc d = desc(DLRT_F32, {3});
  dlrt_value a = 0, b = 0, frozen = 0, p = 0;
  EXPECT_OK(dlrt_graph_variable(g_, "a", &d, "fill", nullptr, 0, 1, &a));
  EXPECT_OK(dlrt_graph_variable(g_, "frozen", &d, "fill", nullptr, 0, 0, &frozen));
  EXPECT_OK(dlrt_graph_variable(g_, "b", &d, "fill", nullptr, 0, 1, &b));
  dlrt_value out[4] = {0, 0, 0, 0};
  EXPECT_EQ(dlrt_graph_trainable_variables(g_, nullptr, 0), 2u);
  EXPECT_EQ(dlrt_graph_trainable_variables(g_, out, 1), 2u);  // count, even with less room
  EXPECT_EQ(out[0], a);
  EXPECT_EQ(out[1], 0u);
  EXPECT_EQ(dlrt_graph_trainable_variables(g_, out, 4), 2u);
  EXPECT_EQ(out[1], b);

  const dlrt_tensor_desc other = desc(DLRT_F32, {4});
  EXPECT_OK(dlrt_graph_placeholder(g_, "p", &other, &p));
  Result mismatch = take(dlrt_graph_assign(g_, a, p));
  EXPECT_EQ(mismatch.code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(mismatch.message.find("must match"), std::string::npos) << mismatch.message;
  EXPECT_OK(dlrt_graph_assign(g_, a, b));
  EXPECT_OK(dlrt_graph_colocate(g_, a, b));
  EXPECT_EQ(take(dlrt_graph_colocate(g_, a, DLRT_INVALID_VALUE)).code, DLRT_INVALID_ARGUMENT);
}

TEST_F(CApiGraph, VariableReadWriteRoundTrip) {
  const dlrt_tensor_desc d = desc(DLRT_F32, {2, 3});
  const dlrt_attr value = float_attr("value", 0.5);
  const dlrt_attr* init[] = {&value};
  dlrt_value v = 0;
  EXPECT_OK(dlrt_graph_variable(g_, "v", &d, "fill", init, 1, 1, &v));
  std::vector<float> got(6, -1.0f);
  // The first read places and initialises it.
  EXPECT_OK(dlrt_graph_variable_read(g_, v, got.data(), 24));
  EXPECT_EQ(got, std::vector<float>(6, 0.5f));
  const std::vector<float> written = {1, 2, 3, 4, 5, 6};
  EXPECT_OK(dlrt_graph_variable_write(g_, v, written.data(), 24));
  EXPECT_OK(dlrt_graph_variable_read(g_, v, got.data(), 24));
  EXPECT_EQ(got, written);

  Result size = take(dlrt_graph_variable_read(g_, v, got.data(), 20));
  EXPECT_EQ(size.code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(size.message.find("holds 24 bytes"), std::string::npos) << size.message;
  dlrt_value x = 0;
  EXPECT_OK(dlrt_graph_placeholder(g_, "x", &d, &x));
  Result not_var = take(dlrt_graph_variable_read(g_, x, got.data(), 24));
  EXPECT_EQ(not_var.code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(not_var.message.find("'x' is not a variable"), std::string::npos) << not_var.message;
}

}  // namespace
