// trace_test.cc: the executor's profiler trace (trace.hpp), parsed back with nlohmann-json:
// two profiled runs of a graph split over two logical CPU devices give one complete event per
// kernel and copy per run, with every required field, one row per device stream, no overlap
// within a stream, names equal to the node names; an executable never profiled writes an
// empty traceEvents array; a bad path is an error naming it; DLRT_TRACE_FILE writes the trace
// when the executable is destroyed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "exec/compiled.hpp"
#include "exec/exec_test_util.hpp"

namespace dlrt::core {
namespace {

using namespace exec_test;  // NOLINT: the shared test helpers
using nlohmann::json;
namespace fs = std::filesystem;

// A fresh folder for this test's files, removed afterwards.
struct TempDir {
  fs::path path =
      fs::temp_directory_path() / ("dlrt_trace_test_" + std::to_string(::getpid()) + "_" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() { fs::create_directories(path); }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

json parse_file(const fs::path& p) {
  std::ifstream in(p);
  EXPECT_TRUE(in.good()) << "cannot open " << p;
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());  // throws (failing the test) on malformed JSON
}

// The placed nodes that run as steps (kernels and copies): name -> op ("copy" for copies).
std::map<std::string, std::string> step_nodes(const Graph& g, const exec::CompiledExecutable& ex) {
  std::map<std::string, std::string> out;
  for (const PlacedNode& p : ex.placed().nodes) {
    if (p.is_copy) out[p.name] = "copy";
    else if (g.node(p.source).kind == NodeKind::kOp) out[p.name] = g.node(p.source).op;
  }
  return out;
}

TEST(Trace, TwoProfiledRunsOnTwoLogicalDevices) {
  auto ctx = make_context("CPU", 2);
  Graph g(*ctx);
  TwoLayers net;
  net.build(g, "CPU:0", "CPU:1");
  auto ex = Executable::compile(g, {net.x}, {net.y}, kAsBuilt);
  auto& compiled = dynamic_cast<exec::CompiledExecutable&>(*ex);
  const auto expected = step_nodes(g, compiled);
  ASSERT_EQ(expected.size(), 5u);  // mm, ba, h on CPU:0; the copy of h; y on CPU:1

  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {4, 3}}, kX);
  TensorPtr y = std::make_unique<dlrt_tensor>(*ctx, 0, TensorType{DLRT_F32, {4, 2}});
  std::vector<dlrt_tensor*> out{y.get()};
  ex->run({x.get()}, out);  // not profiled: records nothing
  EXPECT_TRUE(compiled.profiler.events().empty());
  const std::vector<float> plain = read(*y);
  ex->set_profiling(true);
  ex->run({x.get()}, out);
  ex->run({x.get()}, out);
  EXPECT_EQ(read(*y), plain);  // profiling changes timing, not results
  ex->set_profiling(false);
  ex->run({x.get()}, out);
  EXPECT_EQ(compiled.profiler.events().size(), 2 * expected.size());
  EXPECT_EQ(ex->stats().run_allocations, 0u);

  TempDir dir;
  const fs::path file = dir.path / "trace.json";
  ex->write_trace(file.string());
  for (const auto& entry : fs::directory_iterator(dir.path))  // no temporary left behind
    EXPECT_EQ(entry.path().filename(), "trace.json");
  const json doc = parse_file(file);
  ASSERT_TRUE(doc.at("traceEvents").is_array());

  std::map<int, std::string> thread_names;  // tid -> name
  std::vector<json> complete;
  for (const json& e : doc["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name")) << e.dump();
    EXPECT_EQ(e["pid"], 1);
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name") thread_names[e.at("tid")] = e.at("args").at("name");
      continue;
    }
    ASSERT_EQ(e["ph"], "X") << e.dump();
    for (const char* field : {"name", "cat", "ts", "dur", "pid", "tid", "args"})
      EXPECT_TRUE(e.contains(field)) << field << " missing in " << e.dump();
    EXPECT_TRUE(e["ts"].is_number() && e["dur"].is_number()) << e.dump();
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    for (const char* field : {"op", "device", "shapes"})
      EXPECT_TRUE(e["args"].contains(field)) << field << " missing in args of " << e.dump();
    complete.push_back(e);
  }
  ASSERT_EQ(complete.size(), 2 * expected.size());

  // One tid per device stream, named after its device; each event on its device's row.
  EXPECT_EQ(thread_names,
            (std::map<int, std::string>{{1, "/device:CPU:0 stream"}, {2, "/device:CPU:1 stream"}}));
  std::map<std::string, int> runs_of;  // node name -> events
  for (const json& e : complete) {
    const std::string name = e["name"];
    ASSERT_TRUE(expected.count(name)) << "event for unknown node " << name;
    EXPECT_EQ(e["cat"], expected.at(name));
    EXPECT_EQ(e["args"]["op"], expected.at(name));
    EXPECT_EQ(thread_names.at(e["tid"]), e["args"]["device"].get<std::string>() + " stream");
    ++runs_of[name];
  }
  for (const auto& [name, op] : expected) EXPECT_EQ(runs_of[name], 2) << name;
  // The shapes of a kernel: its inputs, then its outputs.
  for (const json& e : complete)
    if (e["name"] == "mm") EXPECT_EQ(e["args"]["shapes"], "f32(4,3), f32(3,5) -> f32(4,5)");

  // Within one stream, events follow each other without overlapping.
  std::map<int, std::vector<std::pair<double, double>>> by_tid;
  for (const json& e : complete)
    by_tid[e["tid"]].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
  EXPECT_EQ(by_tid.size(), 2u);
  for (auto& [tid, spans] : by_tid) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i)
      EXPECT_LE(spans[i - 1].first + spans[i - 1].second, spans[i].first + 1e-3)
          << "overlap on tid " << tid;
  }
}

TEST(Trace, NeverProfiledWritesAnEmptyTrace) {
  auto ctx = make_context("CPU");
  Graph g(*ctx);
  TwoLayers net;
  net.build(g);
  auto ex = Executable::compile(g, {net.x}, {net.y}, {});
  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {4, 3}}, kX);
  std::vector<dlrt_tensor*> out{nullptr};
  ex->run({x.get()}, out);
  delete out[0];
  TempDir dir;
  ex->write_trace((dir.path / "empty.json").string());
  const json doc = parse_file(dir.path / "empty.json");
  ASSERT_TRUE(doc.at("traceEvents").is_array());
  EXPECT_TRUE(doc["traceEvents"].empty()) << doc.dump();
}

TEST(Trace, BadPathIsAnErrorNamingIt) {
  auto ctx = make_context("CPU");
  Graph g(*ctx);
  TwoLayers net;
  net.build(g);
  auto ex = Executable::compile(g, {net.x}, {net.y}, {});
  const std::string bad = "/nonexistent-dlrt-folder/sub/trace.json";
  auto [code, msg] = error_of([&] { ex->write_trace(bad); });
  EXPECT_EQ(code, DLRT_NOT_FOUND);
  EXPECT_NE(msg.find("'" + bad + "'"), std::string::npos) << msg;
  std::tie(code, msg) = error_of([&] { ex->write_trace(""); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
}

// DLRT_TRACE_FILE (the context setting): every executable profiles from compile and writes
// its trace when destroyed; a second executable gets its own file.
TEST(Trace, TraceFileSettingWritesAtDestroy) {
  TempDir dir;
  const std::string path = (dir.path / "run.json").string();
  dlrt_context_options o;
  dlrt_context_options_init(&o);
  const char* paths[] = {DLRT_TEST_PLUGIN_DIR};
  o.plugin_paths = paths;
  o.num_plugin_paths = 1;
  o.search_default_paths = 0;
  o.visible_devices = "CPU";
  o.plugin_options = "";
  auto ctx = std::make_unique<dlrt_context>(&o, [&](const char* name) -> const char* {
    return std::string(name) == "DLRT_TRACE_FILE" ? path.c_str() : nullptr;
  });
  Graph g(*ctx);
  TwoLayers net;
  net.build(g);
  auto a = Executable::compile(g, {net.x}, {net.y}, kAsBuilt);
  auto b = Executable::compile(g, {net.x}, {net.h}, kAsBuilt);
  const std::string file_a = dynamic_cast<exec::CompiledExecutable&>(*a).trace_file;
  const std::string file_b = dynamic_cast<exec::CompiledExecutable&>(*b).trace_file;
  EXPECT_NE(file_a, file_b);
  EXPECT_EQ(file_a.rfind(dir.path.string(), 0), 0u) << file_a;
  EXPECT_EQ(file_b.substr(file_b.size() - 5), ".json") << file_b;  // "run.<n>.json"
  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {4, 3}}, kX);
  for (int run = 0; run < 3; ++run) {
    std::vector<dlrt_tensor*> out{nullptr};
    a->run({x.get()}, out);
    delete out[0];
  }
  EXPECT_FALSE(fs::exists(file_a));  // written at destroy, not before
  a.reset();
  const json doc = parse_file(file_a);
  size_t events = 0;
  for (const json& e : doc.at("traceEvents")) events += e["ph"] == "X";
  EXPECT_EQ(events, 3u * 4u);  // three runs of mm, ba, h, y
  b.reset();                   // never run: an empty trace, still written
  EXPECT_TRUE(parse_file(file_b).at("traceEvents").empty());
}

}  // namespace
}  // namespace dlrt::core
