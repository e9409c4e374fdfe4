// calibration.cc: measures the cpu plugin's kernel choices (kernel_choices.hpp) on this CPU and
// keeps them in the user's cache folder; the why and the modes are in calibration.hpp.
#include "calibration.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "aligned_memory.hpp"
#include "cpu.hpp"
#include "host_info.hpp"
#include "kernels/prim_conv.hpp"
#include "kernels/winograd_conv.hpp"

namespace dlrt::cpu {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using plugin::OpView;

// Bumped when what is measured or how it is filed changes: older entries are then ignored
// (their key differs) and measured again.
constexpr int kCalibrationFormat = 1;
constexpr const char* kCacheFile = "cpu-kernel-choices.json";
constexpr const char* kVariable = "DLRT_CPU_CALIBRATE";

// ---- the cache file --------------------------------------------------------------------

// A variable through secure_getenv where the C library has it (glibc): a setuid or setgid
// program reads none, as the core reads every DLRT_* variable (README), so such a program
// never writes its cache where its caller's HOME or XDG_CACHE_HOME point.
const char* env_value(const char* name) {
#if defined(__GLIBC__)
  return ::secure_getenv(name);
#else
  return std::getenv(name);
#endif
}

#if defined(_WIN32)
fs::path cache_folder() {
  const wchar_t* local = ::_wgetenv(L"LOCALAPPDATA");
  if (local == nullptr || *local == L'\0') return {};
  return fs::path(local) / "dlrt";
}
#else
fs::path cache_folder() {
  const char* xdg = env_value("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return fs::path(xdg) / "dlrt";  // relative: ignored (XDG)
  const char* home = env_value("HOME");
  if (home == nullptr || home[0] == '\0') return {};
  return fs::path(home) / ".cache" / "dlrt";
}
#endif

// The whole file as JSON; an empty object when it does not exist. `problem` says why a file
// that exists could not be used (it is then replaced when the verdicts are written).
json read_cache(const fs::path& path, std::string& problem) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return json::object();
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    problem = "is not JSON";
    return json::object();
  }
  if (j.value("format", 0) != kCalibrationFormat || !j.contains("entries") ||
      !j["entries"].is_object()) {
    problem = "has another format (expected {\"format\": " + std::to_string(kCalibrationFormat) +
              ", \"entries\": {...}})";
    return json::object();
  }
  return j;
}

// Writes `j` to `path` through a temporary file in the same folder and a rename, so a process
// reading at the same time sees the old file or the new one, never half of one. Returns what
// went wrong, or "".
std::string write_cache(const fs::path& path, const json& j) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return "cannot create " + path.parent_path().u8string() + ": " + ec.message();
  std::random_device rd;
  const fs::path tmp = path.u8string() + ".tmp" + std::to_string(rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << j.dump(2) << "\n";
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return "cannot write " + tmp.u8string();
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return "cannot replace " + path.u8string() + ": " + ec.message();
  }
  return "";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
#if defined(_WIN32)
  gmtime_s(&tm, &t);
#else
  gmtime_r(&t, &tm);
#endif
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// ---- verdicts <-> JSON ------------------------------------------------------------------

json to_json(const KernelChoices& c, double seconds) {
  json passes = json::object();
  for (int pass = 0; pass < kChoicePasses; ++pass)
    for (int cls = 0; cls < kPairClasses; ++cls) {
      const WinogradVerdict& v = c.winograd[pass][cls];
      passes[choice_pass_name(static_cast<ChoicePass>(pass))][pair_class_name(cls)] = {
          {"dlrt_winograd_us", v.dlrt_us},
          {"onednn_direct_us", v.onednn_us},
          {"choice", v.dlrt_wins ? "dlrt_winograd" : "onednn_direct"},
          {"tie", v.tie}};
    }
  return {{"measured_at", utc_now()}, {"seconds", seconds}, {"conv3x3", passes}};
}

// The verdicts an entry holds; false (and `c` untouched) when any is missing or not a time.
bool read_verdicts(const json& entry, KernelChoices& c);
bool from_json(const json& entry, KernelChoices& c) {
  try {
    return read_verdicts(entry, c);
  } catch (const json::exception&) {  // a field of another type: an entry to measure again
    return false;
  }
}

bool read_verdicts(const json& entry, KernelChoices& c) {
  if (!entry.is_object() || !entry.contains("conv3x3") || !entry["conv3x3"].is_object())
    return false;
  KernelChoices read = c;
  for (int pass = 0; pass < kChoicePasses; ++pass)
    for (int cls = 0; cls < kPairClasses; ++cls) {
      const json& p = entry["conv3x3"];
      const char* pass_name = choice_pass_name(static_cast<ChoicePass>(pass));
      if (!p.contains(pass_name) || !p[pass_name].contains(pair_class_name(cls))) return false;
      const json& t = p[pass_name][pair_class_name(cls)];
      if (!t.is_object() || !t.contains("dlrt_winograd_us") || !t.contains("onednn_direct_us") ||
          !t["dlrt_winograd_us"].is_number() || !t["onednn_direct_us"].is_number())
        return false;
      WinogradVerdict& v = read.winograd[pass][cls];
      v.dlrt_us = t["dlrt_winograd_us"].get<double>();
      v.onednn_us = t["onednn_direct_us"].get<double>();
      if (!(v.dlrt_us > 0) || !(v.onednn_us > 0)) return false;
      v.measured = true;
      // The choice as made (a tie keeps the rule's even where oneDNN was a little faster);
      // an entry without one: the faster kernel.
      const std::string choice = t.value("choice", std::string());
      if (choice != "dlrt_winograd" && choice != "onednn_direct" && !choice.empty()) return false;
      v.dlrt_wins = choice.empty() ? v.dlrt_us < v.onednn_us : choice == "dlrt_winograd";
      v.tie = t.value("tie", false);
    }
  c = read;
  return true;
}

// ---- the measurement --------------------------------------------------------------------

// The shapes measured, one per channel-pair class (kernel_choices.hpp): square SAME 3x3
// convolutions c -> c of equal work (37.7 MFLOP direct, ~0.2-0.5 ms on 2 cores), large
// enough that a kernel's fixed costs do not decide, small enough to keep the whole
// calibration short. The few-pairs one is ResNet-20's first stage, the many-pairs one its last
// at a smaller batch.
struct Shape {
  int64_t n, hw, c;
};
constexpr Shape kShapes[kPairClasses] = {{8, 32, 16}, {8, 8, 64}};
constexpr int kRunsPerRound = 3;  // per kernel and round (two rounds), after one untimed run

// A 3x3 stride-1 SAME NHWC convolution op of `pass` at shape `s`, as the core would describe
// it (explicit pads, the backward passes' shape attributes).
OpView conv_op(ChoicePass pass, const Shape& s) {
  auto tensor = [](std::initializer_list<int64_t> dims) {
    dlrt_tensor_desc t{};
    t.struct_size = sizeof t;
    t.dtype = DLRT_F32;
    t.rank = static_cast<int32_t>(dims.size());
    std::copy(dims.begin(), dims.end(), t.dims);
    t.layout = DLRT_LAYOUT_DENSE;
    return t;
  };
  const dlrt_tensor_desc x = tensor({s.n, s.hw, s.hw, s.c}), w = tensor({3, 3, s.c, s.c}),
                         y = tensor({s.n, s.hw, s.hw, s.c});
  const int64_t ones[2] = {1, 1}, pads[4] = {1, 1, 1, 1};
  const int64_t x_dims[4] = {s.n, s.hw, s.hw, s.c}, w_dims[4] = {3, 3, s.c, s.c};
  auto attr = [](const char* name, int32_t type) {
    dlrt_attr a{};
    a.struct_size = sizeof a;
    a.name = name;
    a.type = type;
    return a;
  };
  auto ints = [&](const char* name, const int64_t* v, size_t n) {
    dlrt_attr a = attr(name, DLRT_ATTR_INTS);
    a.ints = v;
    a.count = n;
    return a;
  };
  auto text = [&](const char* name, const char* v) {
    dlrt_attr a = attr(name, DLRT_ATTR_STRING);
    a.s = v;
    return a;
  };
  dlrt_attr groups = attr("groups", DLRT_ATTR_INT);
  groups.i = 1;
  std::vector<dlrt_attr> attrs = {ints("strides", ones, 2),    ints("dilations", ones, 2),
                                  ints("pads", pads, 4),       text("padding", "SAME"),
                                  text("data_format", "NHWC"), groups};
  const char* name = "conv2d";
  std::vector<const dlrt_tensor_desc*> in, out;
  switch (pass) {
    case ChoicePass::forward:
      in = {&x, &w}, out = {&y};
      break;
    case ChoicePass::backward_data:
      name = "conv2d_backward_data";
      in = {&y, &w}, out = {&x};
      attrs.push_back(ints("input_shape", x_dims, 4));
      break;
    case ChoicePass::backward_filter:
      name = "conv2d_backward_filter";
      in = {&x, &y}, out = {&w};
      attrs.push_back(ints("filter_shape", w_dims, 4));
      break;
  }
  std::vector<const dlrt_attr*> attr_ptrs;
  for (const dlrt_attr& a : attrs) attr_ptrs.push_back(&a);
  dlrt_op_desc d{};
  d.struct_size = sizeof d;
  d.op = name;
  d.num_inputs = in.size(), d.inputs = in.data();
  d.num_outputs = out.size(), d.outputs = out.data();
  d.num_attrs = attr_ptrs.size(), d.attrs = attr_ptrs.data();
  d.op_version = 1;
  return OpView(&d);  // copies everything it needs
}

struct Free {
  void operator()(void* p) const { plugin::aligned_release(p); }
};
using Buffer = std::unique_ptr<float, Free>;

Buffer buffer(int64_t floats, bool fill) {
  // Whole 64-byte lines, at least one (aligned_alloc of 0 bytes may return NULL).
  const size_t bytes =
      std::max<size_t>((static_cast<size_t>(floats) * sizeof(float) + 63) / 64 * 64, 64);
  Buffer b(static_cast<float*>(plugin::aligned_allocate(64, bytes)));
  if (!b) plugin::fail(DLRT_RESOURCE_EXHAUSTED, "cpu: calibration buffers");
  // Small values of both signs, the same every time (no denormals, no growth).
  for (int64_t i = 0; i < floats; ++i)
    b.get()[i] = fill ? static_cast<float>(static_cast<int>(i % 13) - 6) * 0.05f : 0.0f;
  return b;
}

// The plugin's flags set for one contender while its kernel is made, restored after.
class FlagScope {
 public:
  FlagScope(dlrt_plugin& p, bool winograd, bool force)
      : p_(p), winograd_(p.winograd), force_(p.winograd_force) {
    p.winograd = winograd, p.winograd_force = force;
  }
  ~FlagScope() { p_.winograd = winograd_, p_.winograd_force = force_; }
  FlagScope(const FlagScope&) = delete;
  FlagScope& operator=(const FlagScope&) = delete;

 private:
  dlrt_plugin& p_;
  bool winograd_, force_;
};

// Each kernel's best time in each of the two rounds of one pass at one shape.
struct Timing {
  double dlrt_us[2] = {0, 0}, onednn_us[2] = {0, 0};
  double best_dlrt() const { return std::min(dlrt_us[0], dlrt_us[1]); }
  double best_onednn() const { return std::min(onednn_us[0], onednn_us[1]); }
};

// Times dlrt's Winograd (forced) against oneDNN's kernel (the option off: what conv_create
// makes then) for one pass at one shape, on the same operands.
Timing measure(dlrt_plugin& p, dnnl::stream& stream, ChoicePass pass, const Shape& s) {
  const OpView op = conv_op(pass, s);
  std::unique_ptr<Kernel> dlrt_kernel, onednn_kernel;
  {
    FlagScope f(p, true, true);
    dlrt_kernel = prim::conv_create(p, op);
  }
  {
    FlagScope f(p, false, false);
    onednn_kernel = prim::conv_create(p, op);
  }
  const int64_t image = s.n * s.hw * s.hw * s.c, filter = 9 * s.c * s.c;
  Buffer x = buffer(image, true), w = buffer(filter, true), dy = buffer(image, true);
  Buffer out = buffer(std::max(image, filter), false);
  const size_t ws_bytes =
      std::max(dlrt_kernel->workspace_bytes(), onednn_kernel->workspace_bytes());
  Buffer ws = buffer(static_cast<int64_t>((ws_bytes + 3) / 4), false);

  const void* inputs[2] = {x.get(), w.get()};  // forward: x, w
  if (pass == ChoicePass::backward_data) inputs[0] = dy.get(), inputs[1] = w.get();
  if (pass == ChoicePass::backward_filter) inputs[0] = x.get(), inputs[1] = dy.get();
  void* outputs[1] = {out.get()};
  dlrt_kernel_args args{};
  args.struct_size = sizeof args;
  args.num_inputs = 2, args.inputs = inputs;
  args.num_outputs = 1, args.outputs = outputs;
  args.workspace = ws.get(), args.workspace_bytes = ws_bytes;

  auto time_us = [&](Kernel& k) {
    const auto t0 = std::chrono::steady_clock::now();
    k.run(stream, args);
    stream.wait();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  };
  time_us(*dlrt_kernel), time_us(*onednn_kernel);  // first runs: page faults, caches
  // Two rounds of kRunsPerRound runs each, interleaved and alternating which goes first (so
  // neither always runs on the other's warm cache); each round keeps each kernel's best.
  Timing t;
  for (int round = 0; round < 2; ++round) {
    double d = 1e300, o = 1e300;
    for (int r = 0; r < kRunsPerRound; ++r) {
      if (r % 2 == 0) {
        d = std::min(d, time_us(*dlrt_kernel));
        o = std::min(o, time_us(*onednn_kernel));
      } else {
        o = std::min(o, time_us(*onednn_kernel));
        d = std::min(d, time_us(*dlrt_kernel));
      }
    }
    t.dlrt_us[round] = d, t.onednn_us[round] = o;
  }
  return t;
}

// What two rounds of one pass say. Unsteady (a neighbour's work came and went, or took a
// core the whole time): a kernel's two bests differ by more than kMaxNoise, or the faster
// kernel reached under kMinPeakFraction of the measured peak in direct-convolution flops
// (2-4x over it for Winograd; both kernels reach a third of it or more on an idle machine, so
// a tenth means the threads waited for a busy core). A tie: the kernels within kTie of each
// other, or the rounds disagreeing on the faster; then the rule's choice (Winograd) stands, a
// verdict like any other, cached, so a CPU where one pass is a close call does not measure
// again in every process. Otherwise the faster kernel wins.
constexpr double kMaxNoise = 0.15;
constexpr double kTie = 0.05;
constexpr double kMinPeakFraction = 0.1;
enum class Outcome { winner, tie, unsteady };
Outcome judge(const Timing& t, const Shape& s, double peak_gflops, std::string& why) {
  auto gap = [](double a, double b) { return std::abs(a - b) / std::max(std::min(a, b), 1e-9); };
  const double noise =
      std::max(gap(t.dlrt_us[0], t.dlrt_us[1]), gap(t.onednn_us[0], t.onednn_us[1]));
  const double margin = gap(t.best_dlrt(), t.best_onednn());
  char text[200] = "";
  const double flops = 18.0 * s.n * s.hw * s.hw * s.c * s.c;  // direct: 2 x 9 per pair
  const double gflops = flops / (std::min(t.best_dlrt(), t.best_onednn()) * 1e3);
  if (peak_gflops > 0 && gflops < kMinPeakFraction * peak_gflops) {
    std::snprintf(text, sizeof text,
                  "the faster kernel ran at %.1f GFLOP/s, under %.0f%% of the measured peak %.0f",
                  gflops, kMinPeakFraction * 100, peak_gflops);
    why = text;
    return Outcome::unsteady;
  }
  if (noise > kMaxNoise) {
    std::snprintf(text, sizeof text, "a kernel's two rounds differ by %.0f%% (more than %.0f%%)",
                  noise * 100, kMaxNoise * 100);
    why = text;
    return Outcome::unsteady;
  }
  const bool rounds_agree = (t.dlrt_us[0] < t.onednn_us[0]) == (t.dlrt_us[1] < t.onednn_us[1]);
  return margin <= kTie || !rounds_agree ? Outcome::tie : Outcome::winner;
}

// Every pass at every shape; `problem` says why the measurement cannot be trusted (then the
// verdicts are not used, and not cached; the first such pass ends the measurement) or stays
// "".
KernelChoices measure_all(dlrt_plugin& p, std::string& problem) {
  dnnl::stream stream(p.engine);
  const double peak =
      p.info.measured_peak_gflops > 0 ? p.info.measured_peak_gflops : p.info.nominal_peak_gflops;
  KernelChoices c;
  for (int pass = 0; pass < kChoicePasses; ++pass)
    for (int cls = 0; cls < kPairClasses; ++cls) {
      const ChoicePass cp = static_cast<ChoicePass>(pass);
      const Timing t = measure(p, stream, cp, kShapes[cls]);
      WinogradVerdict& v = c.winograd[pass][cls];
      v.measured = true;
      v.dlrt_us = t.best_dlrt(), v.onednn_us = t.best_onednn();
      std::string why;
      const Outcome o = judge(t, kShapes[cls], peak, why);
      if (o == Outcome::unsteady) {  // the rest would be as disturbed: stop paying for it
        problem = std::string("conv3x3 ") + choice_pass_name(cp) + ", " + pair_class_name(cls) +
                  " channel pairs: " + why;
        return c;
      }
      v.tie = o == Outcome::tie;
      v.dlrt_wins = v.tie || v.dlrt_us < v.onednn_us;
    }
  return c;
}

std::string seconds_text(double s) {
  char t[32];
  std::snprintf(t, sizeof t, "%.2f s", s);
  return t;
}

}  // namespace

CalibrationMode calibration_mode(const std::string& option) {
  std::string value = option, source = "option 'calibrate'";
  if (value.empty()) {
    const char* env = env_value(kVariable);
    if (env == nullptr || env[0] == '\0') return CalibrationMode::automatic;
    value = env, source = kVariable;
  }
  if (value == "auto") return CalibrationMode::automatic;
  if (value == "redo") return CalibrationMode::redo;
  if (value == "skip") return CalibrationMode::skip;
  plugin::fail(DLRT_INVALID_ARGUMENT,
               "cpu: " + source + " is '" + value + "', expected auto, redo or skip");
}

std::string calibration_cache_path() {
  const fs::path folder = cache_folder();
  return folder.empty() ? "" : (folder / kCacheFile).u8string();
}

std::string calibration_key(const dlrt_plugin& p) {
  using plugin::host::proc_field;
  return p.info.name + " | family " + proc_field("/proc/cpuinfo", "cpu family") + " model " +
         proc_field("/proc/cpuinfo", "model") + " stepping " +
         proc_field("/proc/cpuinfo", "stepping") + " | " + p.info.isa + " | " +
         p.info.library_versions + " | cpu plugin " + kPluginVersion + " calibration " +
         std::to_string(kCalibrationFormat) + " | threads " + std::to_string(p.threads);
}

void calibrate_kernels(dlrt_plugin* p, CalibrationMode mode) {
  KernelChoices& c = p->choices;
  c = KernelChoices{};
  if (!p->unavailable.empty()) {
    c.source = "not calibrated: no oneDNN engine";
    return;
  }
  if (!wino::cpu_supported(*p)) {
    c.source = "nothing to choose: dlrt's Winograd needs AVX2 and FMA";
    return;
  }
  if (!p->winograd || p->winograd_force) {
    c.source = std::string("nothing to choose: option winograd=") +
               (p->winograd_force ? "2 runs dlrt's Winograd" : "0 runs oneDNN's kernels");
    return;
  }
  if (mode == CalibrationMode::skip) {
    c.source = "skipped (option calibrate or DLRT_CPU_CALIBRATE is skip): the rules' defaults";
    return;
  }

  const std::string path_text = calibration_cache_path();
  const fs::path path = fs::u8path(path_text);
  const std::string key = calibration_key(*p);
  std::string problem;
  json cache = path_text.empty() ? json::object() : read_cache(path, problem);
  if (!problem.empty())
    plugin::log(DLRT_LOG_WARNING, "the kernel-choice cache " + path_text + " " + problem +
                                      "; measuring again and replacing it");
  if (mode == CalibrationMode::automatic && cache.contains("entries") &&
      cache["entries"].contains(key) && from_json(cache["entries"][key], c)) {
    c.source = "from the cache " + path_text + " (measured " +
               cache["entries"][key].value("measured_at", std::string("?")) + ")";
    return;
  }

  const auto t0 = std::chrono::steady_clock::now();
  std::string problem_measuring;
  try {
    c = measure_all(*p, problem_measuring);
  } catch (const std::exception& e) {
    c = KernelChoices{};
    c.source = std::string("measurement failed (") + e.what() + "): the rules' defaults";
    plugin::log(DLRT_LOG_WARNING, "kernel calibration " + c.source);
    return;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!problem_measuring.empty()) {
    // A busy machine: verdicts made now could be wrong and would stay in the cache, so this
    // process keeps the rules' defaults and the next one measures again.
    const std::string measured = c.describe();
    c = KernelChoices{};
    c.source = "measurement unsteady (" + problem_measuring +
               "; is the machine busy?): the rules' defaults, nothing cached, measured again "
               "next time";
    plugin::log(DLRT_LOG_INFO, "kernel calibration " + c.source + "; measured: " + measured);
    return;
  }
  c.source = "measured in " + seconds_text(seconds) + " on " + std::to_string(p->threads) +
             " thread" + (p->threads == 1 ? "" : "s");
  if (path_text.empty()) {
    c.source += ", not cached (no XDG_CACHE_HOME, HOME or LOCALAPPDATA)";
  } else {
    if (!cache.is_object() || !cache.contains("entries")) cache = json::object();
    cache["format"] = kCalibrationFormat;
    cache["entries"][key] = to_json(c, seconds);
    const std::string failed = write_cache(path, cache);
    c.source += failed.empty() ? ", cached in " + path_text : ", not cached: " + failed;
  }
  plugin::log(DLRT_LOG_INFO, "kernel choices " + c.source + ": " + c.describe());
}

}  // namespace dlrt::cpu
