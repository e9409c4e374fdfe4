// c_api_memory_test.cc: the arenas as a context builds them, on this build tree's real
// plugins (cpu; reference, posing as a GPU where the GPU options matter):
//   - options memory_growth / memory_fraction / gpu_memory_limit, their environment variables
//     (DLRT_GPU_ALLOW_GROWTH in every boolean spelling, DLRT_GPU_MEMORY_LIMIT_MB; a bad value
//     is a warning naming the variable, then ignored; growth off from the environment
//     preallocates the default fraction) and the struct_size rule for older callers;
//   - limits (gpu_memory_limit, a logical device's own limit, which wins) and the
//     RESOURCE_EXHAUSTED message, through dlrt_tensor_create;
//   - dlrt_context_memory_stats / dlrt::Context::memory_stats following tensors and variables;
//   - growth off: one reservation per logical device, the same share for each;
//   - an executor step allocates nothing.
#include <gtest/gtest.h>

#include <dlrt/dlrt.hpp>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "context.hpp"

#ifndef DLRT_TEST_PLUGIN_DIR
#error "DLRT_TEST_PLUGIN_DIR (the build tree's plugin folder) must be defined by the build"
#endif

namespace {

constexpr const char* kRefAsGpu = "reference:device_type=GPU;reference:device_class=gpu";
constexpr uint64_t kMiB = uint64_t{1} << 20;

struct StatusFree {
  void operator()(dlrt_status* s) const { dlrt_status_free(s); }
};
using StatusPtr = std::unique_ptr<dlrt_status, StatusFree>;
struct ContextFree {
  void operator()(dlrt_context* c) const { dlrt_context_destroy(c); }
};
using ContextPtr = std::unique_ptr<dlrt_context, ContextFree>;
struct TensorFree {
  void operator()(dlrt_tensor* t) const { dlrt_tensor_destroy(t); }
};
using TensorPtr = std::unique_ptr<dlrt_tensor, TensorFree>;

std::string text(const dlrt_status* s) {
  return s == nullptr
             ? "OK"
             : std::string(dlrt_code_name(dlrt_status_code(s))) + ": " + dlrt_status_message(s);
}
bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Options on the build tree's plugins only, every device visible, `plugin_options` given.
dlrt_context_options base_options(const char* plugin_options) {
  static const char* paths[] = {DLRT_TEST_PLUGIN_DIR};
  dlrt_context_options o;
  dlrt_context_options_init(&o);
  o.plugin_paths = paths;
  o.num_plugin_paths = 1;
  o.search_default_paths = 0;
  o.visible_devices = "";
  o.plugin_options = plugin_options;
  return o;
}

ContextPtr create(const dlrt_context_options& o) {
  dlrt_context* c = nullptr;
  StatusPtr s(dlrt_context_create(&o, &c));
  EXPECT_EQ(s, nullptr) << text(s.get());
  return ContextPtr(c);
}

size_t find(dlrt_context* ctx, const char* spec) {
  size_t index = 0;
  StatusPtr s(dlrt_context_find_device(ctx, spec, &index));
  EXPECT_EQ(s, nullptr) << text(s.get());
  return index;
}

dlrt_memory_stats stats(dlrt_context* ctx, size_t device) {
  dlrt_memory_stats m{};
  m.struct_size = DLRT_STRUCT_SIZE(dlrt_memory_stats);
  StatusPtr s(dlrt_context_memory_stats(ctx, device, &m));
  EXPECT_EQ(s, nullptr) << text(s.get());
  return m;
}

dlrt_tensor_desc f32(std::vector<int64_t> dims) {
  dlrt_tensor_desc d{};
  d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  d.dtype = DLRT_F32;
  d.rank = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) d.dims[i] = dims[i];
  d.layout = DLRT_LAYOUT_DENSE;
  return d;
}

// A tensor, or the status that refused it.
std::pair<TensorPtr, StatusPtr> make_tensor(dlrt_context* ctx, size_t device,
                                            std::vector<int64_t> dims) {
  const dlrt_tensor_desc d = f32(std::move(dims));
  dlrt_tensor* t = nullptr;
  StatusPtr s(dlrt_tensor_create(ctx, device, &d, &t));
  return {TensorPtr(t), std::move(s)};
}

// ---- options and environment ----------------------------------------------------------------

TEST(MemoryOptions, DefaultsAndValidation) {
  dlrt_context_options o;
  dlrt_context_options_init(&o);
  EXPECT_EQ(o.memory_growth, -1);
  EXPECT_EQ(o.memory_fraction, 0.0);
  EXPECT_EQ(o.gpu_memory_limit, 0u);

  o = base_options(kRefAsGpu);
  o.memory_growth = 2;
  dlrt_context* c = nullptr;
  StatusPtr s(dlrt_context_create(&o, &c));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << text(s.get());
  EXPECT_TRUE(contains(text(s.get()), "memory_growth is 2")) << text(s.get());
  for (double bad : {1.5, -0.1, std::nan("")}) {
    o = base_options(kRefAsGpu);
    o.memory_fraction = bad;
    s.reset(dlrt_context_create(&o, &c));
    EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << bad << ": " << text(s.get());
    EXPECT_TRUE(contains(text(s.get()), "memory_fraction")) << text(s.get());
    EXPECT_EQ(c, nullptr);
  }
}

TEST(MemoryOptions, AnOlderCallerNeverSetsTheMemoryFields) {
  // A caller compiled before the memory fields: its struct ends at soft_placement, and
  // whatever lies past it in memory is not read.
  union {
    dlrt_context_options o;
    unsigned char bytes[sizeof(dlrt_context_options)];
  } u;
  std::memset(u.bytes, 0xff, sizeof u.bytes);
  dlrt_context_options o = base_options(kRefAsGpu);
  std::memcpy(u.bytes, &o, offsetof(dlrt_context_options, memory_growth));
  u.o.struct_size = offsetof(dlrt_context_options, memory_growth);
  dlrt_context* c = nullptr;
  StatusPtr s(dlrt_context_create(&u.o, &c));
  ASSERT_EQ(s, nullptr) << text(s.get());
  ContextPtr ctx(c);
  dlrt::core::ArenaOptions a = ctx->arena_options(find(c, "GPU:0"));
  EXPECT_EQ(a.limit, 0u);
  EXPECT_DOUBLE_EQ(a.preallocate_fraction, 0.9);
}

struct FakeEnv {
  std::map<std::string, std::string> vars;
  dlrt::core::EnvLookup lookup() const {
    return [this](const char* n) -> const char* {
      auto it = vars.find(n);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

// A context on the cpu plugin and the reference plugin posing as a GPU, with `env` standing in
// for the environment.
std::unique_ptr<dlrt::core::Context> context_with_env(const FakeEnv& env, dlrt_context_options o) {
  return std::make_unique<dlrt::core::Context>(&o, env.lookup());
}

TEST(MemoryEnvironment, AllowGrowthAndLimitApplyToGpuClassDevices) {
  FakeEnv env;
  env.vars = {{"DLRT_GPU_ALLOW_GROWTH", "false"}, {"DLRT_GPU_MEMORY_LIMIT_MB", "3"}};
  auto ctx = context_with_env(env, base_options(kRefAsGpu));
  const size_t gpu = ctx->registry().find("GPU:0"), cpu = ctx->registry().find("CPU:0");
  EXPECT_FALSE(ctx->arena_options(gpu).allow_growth);
  EXPECT_EQ(ctx->arena_options(gpu).limit, 3 * kMiB);
  EXPECT_TRUE(ctx->arena_options(cpu).allow_growth) << "CPU devices always grow";
  EXPECT_EQ(ctx->arena_options(cpu).limit, 0u);
  const dlrt::core::Setting* growth = ctx->settings().find("DLRT_GPU_ALLOW_GROWTH");
  EXPECT_EQ(growth->value, "0");
  EXPECT_EQ(growth->source, DLRT_SOURCE_ENVIRONMENT);
  const dlrt::core::Setting* limit = ctx->settings().find("DLRT_GPU_MEMORY_LIMIT_MB");
  EXPECT_EQ(limit->value, "3");
  EXPECT_EQ(limit->source, DLRT_SOURCE_ENVIRONMENT);

  env.vars = {{"DLRT_GPU_ALLOW_GROWTH", "1"}};
  ctx = context_with_env(env, base_options(kRefAsGpu));
  EXPECT_TRUE(ctx->arena_options(ctx->registry().find("GPU:0")).allow_growth);
  EXPECT_EQ(ctx->arena_options(ctx->registry().find("GPU:0")).limit, 0u);
  EXPECT_EQ(ctx->settings().find("DLRT_GPU_MEMORY_LIMIT_MB")->source, DLRT_SOURCE_DEFAULT);
}

TEST(MemoryEnvironment, BadValuesAreLoggedAndTheDefaultsKept) {
  // The settings policy (settings.hpp): a typo in a variable must not stop a program; it is
  // logged as a warning and the default applies (growth on, no limit).
  for (const char* bad_limit : {"12MB", "-5", "99999999999999999"}) {
    FakeEnv env;
    env.vars = {{"DLRT_GPU_ALLOW_GROWTH", "maybe"}, {"DLRT_GPU_MEMORY_LIMIT_MB", bad_limit}};
    auto ctx = context_with_env(env, base_options(kRefAsGpu));
    const size_t gpu = ctx->registry().find("GPU:0");
    EXPECT_TRUE(ctx->arena_options(gpu).allow_growth);
    EXPECT_EQ(ctx->arena_options(gpu).limit, 0u) << bad_limit;
    EXPECT_EQ(ctx->settings().find("DLRT_GPU_ALLOW_GROWTH")->source, DLRT_SOURCE_DEFAULT);
    EXPECT_EQ(ctx->settings().find("DLRT_GPU_MEMORY_LIMIT_MB")->value, "") << bad_limit;
  }
}

TEST(MemoryEnvironment, EverySpellingOfAllowGrowth) {
  for (const char* on : {"1", "true", "TRUE", "yes", "on"}) {
    FakeEnv env;
    env.vars = {{"DLRT_GPU_ALLOW_GROWTH", on}};
    auto ctx = context_with_env(env, base_options(kRefAsGpu));
    EXPECT_TRUE(ctx->arena_options(ctx->registry().find("GPU:0")).allow_growth) << on;
  }
  for (const char* off : {"0", "false", "False", "no", "off"}) {
    FakeEnv env;
    env.vars = {{"DLRT_GPU_ALLOW_GROWTH", off}};
    auto ctx = context_with_env(env, base_options(kRefAsGpu));
    EXPECT_FALSE(ctx->arena_options(ctx->registry().find("GPU:0")).allow_growth) << off;
  }
}

// A bad value does not stop the program (the settings policy, and what TensorFlow does with
// TF_FORCE_GPU_ALLOW_GROWTH), but the warning names the variable, the value and what is
// accepted, so the typo is found.
TEST(MemoryEnvironment, ABadValueIsAWarningNamingTheVariable) {
  FakeEnv env;
  env.vars = {{"DLRT_GPU_ALLOW_GROWTH", "maybe"},
              {"DLRT_GPU_MEMORY_LIMIT_MB", "12MB"},
              {"DLRT_LOG_LEVEL", "warning"}};
  ::testing::internal::CaptureStderr();
  auto ctx = context_with_env(env, base_options(kRefAsGpu));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(log,
                       "DLRT_GPU_ALLOW_GROWTH='maybe' is not a boolean; expected 1/0, "
                       "true/false, yes/no or on/off; using 1"))
      << log;
  EXPECT_TRUE(contains(log, "DLRT_GPU_MEMORY_LIMIT_MB='12MB' is not a non-negative integer"))
      << log;
}

// DLRT_GPU_ALLOW_GROWTH=false end to end: the first allocation on the GPU reserves the default
// fraction (0.9) of the device's free memory in one plugin allocation; later ones come out of
// it; CPU devices keep growing.
TEST(MemoryEnvironment, GrowthOffPreallocatesTheDefaultFraction) {
  FakeEnv env;
  env.vars = {{"DLRT_GPU_ALLOW_GROWTH", "false"}};
  auto ctx =
      context_with_env(env, base_options("reference:device_type=GPU;reference:device_class=gpu;"
                                         "reference:memory_mb=64"));
  const size_t gpu = ctx->registry().find("GPU:0");
  dlrt::core::DeviceArena& arena = ctx->arena(gpu);
  EXPECT_EQ(arena.stats().reserved, 0u) << "nothing reserved before first use";
  const uint64_t free_before = 64 * kMiB;  // a fresh reference device of memory_mb=64
  std::vector<dlrt::core::Buffer> held;
  for (size_t bytes : {1000u, 100000u, 4096u}) held.push_back(arena.allocate(bytes, "a test"));
  const dlrt::core::ArenaStats st = arena.stats();
  EXPECT_EQ(st.num_allocs, 1u);
  EXPECT_LE(st.reserved, uint64_t(0.9 * double(free_before)));
  EXPECT_GT(st.reserved, uint64_t(0.9 * double(free_before)) - 4096);
  EXPECT_EQ(st.in_use, 1000u + 100000u + 4096u);
}

TEST(MemoryEnvironment, ApiOptionsWinOverTheEnvironment) {
  FakeEnv env;
  env.vars = {{"DLRT_GPU_ALLOW_GROWTH", "0"}, {"DLRT_GPU_MEMORY_LIMIT_MB", "3"}};
  dlrt_context_options o = base_options(kRefAsGpu);
  o.memory_growth = 1;
  o.gpu_memory_limit = 3 * kMiB / 2;
  o.memory_fraction = 0.25;
  auto ctx = context_with_env(env, o);
  const dlrt::core::ArenaOptions a = ctx->arena_options(ctx->registry().find("GPU:0"));
  EXPECT_TRUE(a.allow_growth);
  EXPECT_EQ(a.limit, 3 * kMiB / 2);
  EXPECT_DOUBLE_EQ(a.preallocate_fraction, 0.25);
  EXPECT_EQ(ctx->settings().find("DLRT_GPU_ALLOW_GROWTH")->source, DLRT_SOURCE_API);
  EXPECT_EQ(ctx->settings().find("DLRT_GPU_MEMORY_LIMIT_MB")->source, DLRT_SOURCE_API);
  EXPECT_EQ(ctx->settings().find("DLRT_GPU_MEMORY_LIMIT_MB")->value, "1.500 (1572864 bytes)");
}

// ---- limits and out of memory ---------------------------------------------------------------

TEST(MemoryLimits, GpuMemoryLimitOnTheReferencePluginPosingAsAGpu) {
  dlrt_context_options o = base_options(kRefAsGpu);
  o.gpu_memory_limit = kMiB;
  ContextPtr ctx = create(o);
  const size_t gpu = find(ctx.get(), "GPU:0"), cpu = find(ctx.get(), "CPU:0");
  EXPECT_EQ(stats(ctx.get(), gpu).limit, kMiB);
  EXPECT_EQ(stats(ctx.get(), cpu).limit, 0u) << "the GPU limit leaves CPU devices alone";

  auto [a, ok] = make_tensor(ctx.get(), gpu, {768, 256});  // 768 KiB
  ASSERT_EQ(ok, nullptr) << text(ok.get());
  auto [b, refused] = make_tensor(ctx.get(), gpu, {768, 256});
  EXPECT_EQ(b, nullptr);
  ASSERT_EQ(dlrt_status_code(refused.get()), DLRT_RESOURCE_EXHAUSTED) << text(refused.get());
  const std::string msg = text(refused.get());
  EXPECT_TRUE(contains(msg, "out of memory on /device:GPU:0")) << msg;
  EXPECT_TRUE(contains(msg, "a tensor asked for 786432 bytes (768.00 KiB)")) << msg;
  EXPECT_TRUE(contains(msg, "in use 786432 bytes")) << msg;
  EXPECT_TRUE(contains(msg, "peak 786432 bytes")) << msg;
  EXPECT_TRUE(contains(msg, "limit 1048576 bytes (1.00 MiB)")) << msg;
  // The arena is still usable: a smaller request fits.
  auto [c, fits] = make_tensor(ctx.get(), gpu, {64, 256});
  EXPECT_EQ(fits, nullptr) << text(fits.get());
  EXPECT_EQ(stats(ctx.get(), gpu).in_use, 786432u + 65536u);
}

TEST(MemoryLimits, ALogicalDeviceLimitWinsOverTheGpuLimit) {
  const uint64_t limits[] = {4096, 0};
  dlrt_logical_device_config split{};
  split.struct_size = DLRT_STRUCT_SIZE(dlrt_logical_device_config);
  split.physical_device = "GPU:0";
  split.count = 2;
  split.memory_limits = limits;
  dlrt_context_options o = base_options(kRefAsGpu);
  o.logical_devices = &split;
  o.num_logical_devices = 1;
  o.gpu_memory_limit = kMiB;
  ContextPtr ctx = create(o);
  const size_t gpu0 = find(ctx.get(), "GPU:0"), gpu1 = find(ctx.get(), "GPU:1");
  EXPECT_EQ(stats(ctx.get(), gpu0).limit, 4096u);
  EXPECT_EQ(stats(ctx.get(), gpu1).limit, kMiB);
  auto [a, refused] = make_tensor(ctx.get(), gpu0, {2048});  // 8 KiB > 4 KiB
  EXPECT_EQ(dlrt_status_code(refused.get()), DLRT_RESOURCE_EXHAUSTED) << text(refused.get());
  EXPECT_TRUE(contains(text(refused.get()), "limit 4096 bytes")) << text(refused.get());
  auto [b, ok] = make_tensor(ctx.get(), gpu1, {2048});
  EXPECT_EQ(ok, nullptr) << text(ok.get());
}

// ---- stats ----------------------------------------------------------------------------------

TEST(MemoryStats, FollowTensorsAndVariables) {
  ContextPtr ctx = create(base_options(""));
  const size_t cpu = find(ctx.get(), "CPU:0");
  dlrt::Context cxx(ctx.release());  // the C++ wrapper from here on
  const dlrt::MemoryStats before = cxx.memory_stats(cpu);
  {
    auto [a, s1] = make_tensor(cxx.get(), cpu, {1000});  // 4000 bytes
    auto [b, s2] = make_tensor(cxx.get(), cpu, {250});   // 1000 bytes
    const dlrt::MemoryStats during = cxx.memory_stats(cpu);
    EXPECT_EQ(during.in_use, before.in_use + 5000);
    EXPECT_GE(during.peak, before.in_use + 5000);
    EXPECT_GE(during.reserved, during.in_use);
    EXPECT_EQ(during.limit, 0u);
  }
  EXPECT_EQ(cxx.memory_stats(cpu).in_use, before.in_use);
  EXPECT_GE(cxx.memory_stats(cpu).peak, before.in_use + 5000) << "the peak stays";

  // A variable's storage comes from the arena of its device, and goes back with its graph.
  dlrt_graph* g = nullptr;
  StatusPtr s(dlrt_graph_create(cxx.get(), &g));
  ASSERT_EQ(s, nullptr) << text(s.get());
  s.reset(dlrt_graph_push_device(g, "CPU:0"));
  ASSERT_EQ(s, nullptr) << text(s.get());
  const dlrt_tensor_desc d = f32({64, 32});
  dlrt_value v = DLRT_INVALID_VALUE;
  s.reset(dlrt_graph_variable(g, "w", &d, "fill", nullptr, 0, 1, &v));
  ASSERT_EQ(s, nullptr) << text(s.get());
  std::vector<float> host(64 * 32, 1.0f);
  s.reset(dlrt_graph_variable_read(g, v, host.data(), host.size() * sizeof(float)));
  ASSERT_EQ(s, nullptr) << text(s.get());
  EXPECT_EQ(host[0], 0.0f) << "fill's default value";
  EXPECT_EQ(cxx.memory_stats(cpu).in_use, before.in_use + 64 * 32 * 4);
  dlrt_graph_destroy(g);
  EXPECT_EQ(cxx.memory_stats(cpu).in_use, before.in_use);

  dlrt_memory_stats m{};
  m.struct_size = DLRT_STRUCT_SIZE(dlrt_memory_stats);
  s.reset(dlrt_context_memory_stats(cxx.get(), 1000, &m));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_OUT_OF_RANGE) << text(s.get());
  s.reset(dlrt_context_memory_stats(cxx.get(), cpu, nullptr));
  EXPECT_EQ(dlrt_status_code(s.get()), DLRT_INVALID_ARGUMENT) << text(s.get());
}

// ---- growth off -----------------------------------------------------------------------------

TEST(MemoryGrowthOff, ReservesOnceAndTheSameShareOnEachLogicalDevice) {
  dlrt_logical_device_config split{};
  split.struct_size = DLRT_STRUCT_SIZE(dlrt_logical_device_config);
  split.physical_device = "GPU:0";
  split.count = 2;
  dlrt_context_options o =
      base_options("reference:device_type=GPU;reference:device_class=gpu;reference:memory_mb=64");
  o.logical_devices = &split;
  o.num_logical_devices = 1;
  o.memory_growth = 0;
  o.memory_fraction = 0.5;
  ContextPtr ctx = create(o);
  const size_t gpu0 = find(ctx.get(), "GPU:0"), gpu1 = find(ctx.get(), "GPU:1");
  uint64_t free_before = 0;
  StatusPtr s(dlrt_context_device_memory_free(ctx.get(), gpu0, &free_before));
  ASSERT_EQ(s, nullptr) << text(s.get());
  EXPECT_EQ(stats(ctx.get(), gpu0).num_allocs, 0u) << "nothing reserved before first use";

  for (int i = 0; i < 50; ++i) {
    auto [a, s0] = make_tensor(ctx.get(), gpu0, {100 + i});
    auto [b, s1] = make_tensor(ctx.get(), gpu1, {1000, 1 + i});
    ASSERT_EQ(s0, nullptr) << text(s0.get());
    ASSERT_EQ(s1, nullptr) << text(s1.get());
  }
  const dlrt_memory_stats m0 = stats(ctx.get(), gpu0), m1 = stats(ctx.get(), gpu1);
  EXPECT_EQ(m0.num_allocs, 1u);
  EXPECT_EQ(m1.num_allocs, 1u);
  EXPECT_EQ(m0.in_use, 0u);
  EXPECT_EQ(m0.reserved, m1.reserved) << "both shares come from one measurement";
  EXPECT_LE(m0.reserved, free_before / 4);
  EXPECT_GT(m0.reserved, free_before / 4 - 256);
  uint64_t free_after = 0;
  s.reset(dlrt_context_device_memory_free(ctx.get(), gpu0, &free_after));
  ASSERT_EQ(s, nullptr) << text(s.get());
  EXPECT_EQ(free_before - free_after, m0.reserved + m1.reserved);

  // More than a share: RESOURCE_EXHAUSTED from the reservation, and the arena goes on.
  auto [big, refused] = make_tensor(ctx.get(), gpu0, {5, 1024, 1024});  // 20 MiB > 16 MiB
  EXPECT_EQ(dlrt_status_code(refused.get()), DLRT_RESOURCE_EXHAUSTED) << text(refused.get());
  EXPECT_TRUE(contains(text(refused.get()), "growth off")) << text(refused.get());
  auto [small, ok] = make_tensor(ctx.get(), gpu0, {1024});
  EXPECT_EQ(ok, nullptr) << text(ok.get());
}

// ---- the executor ---------------------------------------------------------------------------

TEST(MemoryExecutor, AStepAllocatesNothing) {
  ContextPtr ctx = create(base_options(""));
  const size_t cpu = find(ctx.get(), "CPU:0");
  dlrt_graph* g = nullptr;
  StatusPtr s(dlrt_graph_create(ctx.get(), &g));
  ASSERT_EQ(s, nullptr) << text(s.get());
  std::unique_ptr<dlrt_graph, void (*)(dlrt_graph*)> graph(g, dlrt_graph_destroy);
  s.reset(dlrt_graph_push_device(g, "CPU:0"));
  ASSERT_EQ(s, nullptr) << text(s.get());
  // z = relu(x @ w): x (8,16) fed, w (16,4) a variable.
  const dlrt_tensor_desc xd = f32({8, 16}), wd = f32({16, 4});
  dlrt_value x = DLRT_INVALID_VALUE, w = DLRT_INVALID_VALUE, y = DLRT_INVALID_VALUE,
             z = DLRT_INVALID_VALUE;
  size_t n = 0;
  s.reset(dlrt_graph_placeholder(g, "x", &xd, &x));
  ASSERT_EQ(s, nullptr) << text(s.get());
  s.reset(dlrt_graph_variable(g, "w", &wd, "random_uniform", nullptr, 0, 1, &w));
  ASSERT_EQ(s, nullptr) << text(s.get());
  const dlrt_value mm_in[] = {x, w};
  s.reset(dlrt_graph_op(g, "matmul", "y", mm_in, 2, nullptr, 0, &y, 1, &n));
  ASSERT_EQ(s, nullptr) << text(s.get());
  s.reset(dlrt_graph_op(g, "relu", "z", &y, 1, nullptr, 0, &z, 1, &n));
  ASSERT_EQ(s, nullptr) << text(s.get());
  dlrt_executable* e = nullptr;
  s.reset(dlrt_graph_compile(g, &x, 1, &z, 1, nullptr, &e));
  ASSERT_EQ(s, nullptr) << text(s.get());
  std::unique_ptr<dlrt_executable, void (*)(dlrt_executable*)> exe(e, dlrt_executable_destroy);

  auto [feed, s1] = make_tensor(ctx.get(), cpu, {8, 16});
  auto [fetch, s2] = make_tensor(ctx.get(), cpu, {8, 4});
  ASSERT_EQ(s1, nullptr) << text(s1.get());
  ASSERT_EQ(s2, nullptr) << text(s2.get());
  std::vector<float> ones(8 * 16, 1.0f);
  s.reset(dlrt_tensor_write(feed.get(), ones.data(), ones.size() * sizeof(float)));
  ASSERT_EQ(s, nullptr) << text(s.get());

  // Compiled: the plan's buffers, workspaces and the variable are already in the arena.
  const dlrt_memory_stats compiled = stats(ctx.get(), cpu);
  EXPECT_GT(compiled.in_use, 8u * 16 * 4 + 8 * 4 * 4 + 16 * 4 * 4) << "feed, fetch, w and the plan";
  for (int i = 0; i < 5; ++i) {
    const dlrt_tensor* feeds[] = {feed.get()};
    dlrt_tensor* fetches[] = {fetch.get()};
    s.reset(dlrt_executable_run(e, feeds, 1, fetches, 1));
    ASSERT_EQ(s, nullptr) << text(s.get());
    EXPECT_EQ(fetches[0], fetch.get()) << "the preallocated fetch tensor is used";
  }
  const dlrt_memory_stats after = stats(ctx.get(), cpu);
  EXPECT_EQ(after.num_allocs, compiled.num_allocs);
  EXPECT_EQ(after.in_use, compiled.in_use);
  EXPECT_EQ(after.peak, compiled.peak);
  std::vector<float> out(8 * 4);
  s.reset(dlrt_tensor_read(fetch.get(), out.data(), out.size() * sizeof(float)));
  ASSERT_EQ(s, nullptr) << text(s.get());
  EXPECT_GT(out[0], 0.0f) << "sum of 16 uniform(0,1) weights";

  // Destroying the executable gives its buffers back; the variable stays with the graph.
  exe.reset();
  EXPECT_EQ(stats(ctx.get(), cpu).in_use, 8u * 16 * 4 + 8 * 4 * 4 + 16 * 4 * 4);
}

}  // namespace
