// c_api_exec_test.cc: the executor's C functions — compile options, dlrt_graph_compile with
// its errors as statuses, dlrt_executable_run, the placement of every node, the dumps, and
// the placement log printed at compile.
#include <dlrt/dlrt.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace {

struct Deleter {
  void operator()(dlrt_status* s) const { dlrt_status_free(s); }
  void operator()(dlrt_context* c) const { dlrt_context_destroy(c); }
  void operator()(dlrt_graph* g) const { dlrt_graph_destroy(g); }
  void operator()(dlrt_executable* e) const { dlrt_executable_destroy(e); }
  void operator()(dlrt_tensor* t) const { dlrt_tensor_destroy(t); }
};
template <typename T>
using Ptr = std::unique_ptr<T, Deleter>;

std::string text(dlrt_status* s) {
  Ptr<dlrt_status> owned(s);
  return s == nullptr
             ? "OK"
             : std::string(dlrt_code_name(dlrt_status_code(s))) + ": " + dlrt_status_message(s);
}

dlrt_tensor_desc desc(std::vector<int64_t> dims) {
  dlrt_tensor_desc d{};
  d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  d.dtype = DLRT_F32;
  d.rank = int32_t(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) d.dims[i] = dims[i];
  d.layout = DLRT_LAYOUT_DENSE;
  return d;
}

class CApiExec : public ::testing::Test {
 protected:
  void SetUp() override {
    dlrt_context_options o;
    dlrt_context_options_init(&o);
    const char* paths[] = {DLRT_TEST_PLUGIN_DIR};
    o.plugin_paths = paths;
    o.num_plugin_paths = 1;
    o.search_default_paths = 0;
    o.visible_devices = "CPU";
    o.plugin_options = "";
    o.log_device_placement = 0;
    dlrt_context* c = nullptr;
    ASSERT_EQ(text(dlrt_context_create(&o, &c)), "OK");
    ctx_.reset(c);
    dlrt_graph* g = nullptr;
    ASSERT_EQ(text(dlrt_graph_create(ctx_.get(), &g)), "OK");
    graph_.reset(g);
    dlrt_tensor_desc dx = desc({2, 3});
    ASSERT_EQ(text(dlrt_graph_placeholder(graph_.get(), "x", &dx, &x_)), "OK");
    size_t n = 0;
    ASSERT_EQ(text(dlrt_graph_op(graph_.get(), "relu", "y", &x_, 1, nullptr, 0, &y_, 1, &n)), "OK");
  }

  Ptr<dlrt_context> ctx_;
  Ptr<dlrt_graph> graph_;
  dlrt_value x_ = DLRT_INVALID_VALUE, y_ = DLRT_INVALID_VALUE;
};

// auto_device: -1 by default (each op by priority, no summary); 1 picks one device and says
// which through dlrt_executable_auto_device; anything else is refused by name.
TEST_F(CApiExec, AutoDeviceOptionAndSummary) {
  dlrt_compile_options opts;
  dlrt_compile_options_init(&opts);
  EXPECT_EQ(opts.auto_device, -1);
  dlrt_executable* raw = nullptr;
  ASSERT_EQ(text(dlrt_graph_compile(graph_.get(), &x_, 1, &y_, 1, &opts, &raw)), "OK");
  Ptr<dlrt_executable> by_priority(raw);
  size_t len = 99;
  ASSERT_EQ(text(dlrt_executable_auto_device(by_priority.get(), nullptr, 0, &len)), "OK");
  EXPECT_EQ(len, 0u);

  opts.auto_device = 1;
  ASSERT_EQ(text(dlrt_graph_compile(graph_.get(), &x_, 1, &y_, 1, &opts, &raw)), "OK");
  Ptr<dlrt_executable> by_auto(raw);
  ASSERT_EQ(text(dlrt_executable_auto_device(by_auto.get(), nullptr, 0, &len)), "OK");
  std::string summary(len, '\0');
  ASSERT_EQ(text(dlrt_executable_auto_device(by_auto.get(), summary.data(), len + 1, &len)), "OK");
  EXPECT_EQ(
      summary.rfind("picked /device:CPU:0 (plugin cpu, class CPU): it runs all of the 1 op(s)", 0),
      0u)
      << summary;
  EXPECT_EQ(
      text(dlrt_executable_auto_device(nullptr, nullptr, 0, &len)).rfind("INVALID_ARGUMENT", 0),
      0u);

  opts.auto_device = 2;
  const std::string bad = text(dlrt_graph_compile(graph_.get(), &x_, 1, &y_, 1, &opts, &raw));
  EXPECT_EQ(bad.rfind("INVALID_ARGUMENT", 0), 0u) << bad;
  EXPECT_NE(bad.find("options->auto_device is 2"), std::string::npos) << bad;
}

TEST_F(CApiExec, CompileRunAndPlacement) {
  dlrt_compile_options opts;
  dlrt_compile_options_init(&opts);
  EXPECT_EQ(opts.struct_size, sizeof(dlrt_compile_options));
  EXPECT_EQ(opts.soft_placement, -1);
  EXPECT_EQ(opts.use_capture, -1);
  EXPECT_EQ(opts.run_assigns, -1);
  opts.log_device_placement = 1;
  dlrt_executable* raw = nullptr;
  ::testing::internal::CaptureStderr();
  dlrt_status* s = dlrt_graph_compile(graph_.get(), &x_, 1, &y_, 1, &opts, &raw);
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(text(s), "OK");
  Ptr<dlrt_executable> ex(raw);
  EXPECT_NE(log.find("y: (relu): /job:localhost/replica:0/task:0/device:CPU:0"), std::string::npos)
      << log;

  ASSERT_EQ(dlrt_executable_node_count(ex.get()), 2u);
  dlrt_node_placement p{};
  p.struct_size = DLRT_STRUCT_SIZE(dlrt_node_placement);
  ASSERT_EQ(text(dlrt_executable_node_placement(ex.get(), 1, &p)), "OK");
  EXPECT_STREQ(p.name, "y");
  EXPECT_STREQ(p.op, "relu");
  EXPECT_STREQ(p.requested, "");
  EXPECT_STREQ(p.assigned, "/job:localhost/replica:0/task:0/device:CPU:0");
  ASSERT_EQ(text(dlrt_executable_node_placement(ex.get(), 0, &p)), "OK");
  EXPECT_STREQ(p.op, "placeholder");
  EXPECT_EQ(text(dlrt_executable_node_placement(ex.get(), 2, &p)).rfind("OUT_OF_RANGE", 0), 0u);

  size_t len = 0;
  ASSERT_EQ(text(dlrt_executable_dump(ex.get(), DLRT_DUMP_JSON, nullptr, 0, &len)), "OK");
  std::string json(len, '\0');
  ASSERT_EQ(text(dlrt_executable_dump(ex.get(), DLRT_DUMP_JSON, json.data(), len + 1, &len)), "OK");
  EXPECT_NE(json.find("\"y\""), std::string::npos) << json;
  char small[8];
  ASSERT_EQ(text(dlrt_executable_dump(ex.get(), DLRT_DUMP_DOT, small, sizeof small, &len)), "OK");
  EXPECT_GT(len, 7u);
  EXPECT_EQ(std::string(small).size(), 7u);  // truncated, NUL-terminated
  EXPECT_EQ(text(dlrt_executable_dump(ex.get(), 9, nullptr, 0, &len)).rfind("INVALID_ARGUMENT", 0),
            0u);

  dlrt_tensor_desc dx = desc({2, 3});
  dlrt_tensor* xt = nullptr;
  ASSERT_EQ(text(dlrt_tensor_create(ctx_.get(), 0, &dx, &xt)), "OK");
  Ptr<dlrt_tensor> x(xt);
  const float in[6] = {-1, 2, -3, 4, -5, 6};
  ASSERT_EQ(text(dlrt_tensor_write(x.get(), in, sizeof in)), "OK");
  const dlrt_tensor* feeds[] = {x.get()};
  dlrt_tensor* fetches[] = {nullptr};
  ASSERT_EQ(text(dlrt_executable_run(ex.get(), feeds, 1, fetches, 1)), "OK");
  Ptr<dlrt_tensor> y(fetches[0]);
  float out[6];
  ASSERT_EQ(text(dlrt_tensor_read(y.get(), out, sizeof out)), "OK");
  EXPECT_EQ(std::vector<float>(out, out + 6), (std::vector<float>{0, 2, 0, 4, 0, 6}));
}

TEST_F(CApiExec, ErrorsAreStatuses) {
  dlrt_executable* ex = reinterpret_cast<dlrt_executable*>(0x1);
  std::string t = text(dlrt_graph_compile(graph_.get(), nullptr, 0, &y_, 1, nullptr, &ex));
  EXPECT_EQ(ex, nullptr);
  EXPECT_EQ(t, "INVALID_ARGUMENT: placeholder 'x' (f32(2,3)) is needed by the fetches but not fed");
  EXPECT_EQ(text(dlrt_graph_compile(nullptr, nullptr, 0, &y_, 1, nullptr, &ex))
                .rfind("INVALID_ARGUMENT", 0),
            0u);
  dlrt_compile_options bad{};
  bad.struct_size = 2;
  EXPECT_NE(text(dlrt_graph_compile(graph_.get(), &x_, 1, &y_, 1, &bad, &ex)).find("struct_size"),
            std::string::npos);
  dlrt_value wrong = (uint64_t(77) << 32);
  EXPECT_EQ(text(dlrt_graph_compile(graph_.get(), &x_, 1, &wrong, 1, nullptr, &ex))
                .rfind("INVALID_ARGUMENT", 0),
            0u);
  EXPECT_EQ(dlrt_executable_node_count(nullptr), 0u);
  dlrt_executable_destroy(nullptr);
}

}  // namespace
