// dlrt-onnx-suite: runs ONNX's own conformance cases (written by generate_cases.py in ONNX's
// backend-test layout) through dlrt::InferenceSession on each device asked for, and sorts
// every case into pass, fail (wrong numbers or an unexpected error: a defect) or unsupported
// (dlrt says UNIMPLEMENTED, with the reason). Prints per-op counts; --report writes them as
// Markdown (docs/onnx-conformance.md).
//
//   dlrt-onnx-suite --cases build/onnx-cases --kind node --devices CPU:0 --report out.md
//   dlrt-onnx-suite --cases build/onnx-cases --kind light --min-pass 1.0
//
// Outputs are compared as numpy.testing.assert_allclose in ONNX's runner does:
// |got - want| <= atol + rtol * |want| (rtol 1e-3, atol 1e-7), NaN matching NaN; integer and
// bool outputs exactly. Exit status: 1 when any case fails or the pass rate is below
// --min-pass, else 0.
#include <CLI/CLI.hpp>
#include <dlrt/context.hpp>
#include <dlrt/context_options.hpp>
#include <dlrt/context_info.hpp>
#include <dlrt/inference_session.hpp>
#include <dlrt/tensor.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "onnx_import/host_tensor.hpp"
#include "onnx_import/tensor_proto.hpp"

namespace fs = std::filesystem;
using dlrt::onnx_import::HostTensor;

namespace {

enum class Verdict { kPass, kFail, kUnsupported };

struct Result {
  std::string name, op, device;
  Verdict verdict = Verdict::kPass;
  std::string reason;
};

// `model_dtype`: the dtype the model gives this tensor. ONNX's generators save bfloat16 data
// as UINT16 (NumPy has no bfloat16): the same 16 bits, read as BFLOAT16 where the model says so.
HostTensor read_pb(const fs::path& path, dlrt_dtype model_dtype) {
  std::ifstream in(path, std::ios::binary);
  onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&in))
    throw dlrt::core::Error(DLRT_INVALID_ARGUMENT, "cannot parse " + path.string());
  if (model_dtype == DLRT_BF16 && proto.data_type() == onnx::TensorProto::UINT16)
    proto.set_data_type(onnx::TensorProto::BFLOAT16);
  return dlrt::onnx_import::read_tensor_proto(proto, {}, path.filename().string());
}

// The op a case tests: its single node's type; several nodes (function bodies, expanded
// cases, light models) are named by the case.
std::string op_of(const fs::path& model_path, const std::string& kind, const std::string& name) {
  if (kind == "light") return name;
  std::ifstream in(model_path, std::ios::binary);
  onnx::ModelProto m;
  if (!m.ParseFromIstream(&in) || m.graph().node_size() == 0) return "(unreadable)";
  if (name.find("_expanded") != std::string::npos) return m.graph().node(0).op_type() + " (expanded)";
  std::string op = m.graph().node(0).op_type();
  for (const auto& n : m.graph().node())
    if (n.op_type() != op) return op + " (+ others)";
  return op;
}

std::string compare(const HostTensor& want, const std::vector<uint8_t>& got_bytes,
                    dlrt_dtype got_dtype, const std::vector<int64_t>& got_dims, double rtol,
                    double atol) {
  if (got_dtype != want.dtype)
    return fmt::format("dtype {} where ONNX wants {}", dlrt_dtype_name(got_dtype), dlrt_dtype_name(want.dtype));
  if (got_dims != want.dims)
    return fmt::format("dims {} where ONNX wants {}", dlrt::onnx_import::dims_text(got_dims),
                       dlrt::onnx_import::dims_text(want.dims));
  HostTensor got;
  got.dtype = got_dtype;
  got.dims = got_dims;
  got.bytes = got_bytes;
  const std::vector<double> g = got.as_doubles(), w = want.as_doubles();
  // Integers and bool: element by element, by their bytes (a u64 or i64 beyond 2^53 is not
  // told apart from its neighbours as a double).
  const bool exact = !(want.dtype == DLRT_F32 || want.dtype == DLRT_F64 || want.dtype == DLRT_F16 ||
                       want.dtype == DLRT_BF16);
  const size_t es = dlrt_dtype_size(want.dtype);
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    bool ok;
    if (exact) ok = std::memcmp(got.bytes.data() + i * es, want.bytes.data() + i * es, es) == 0;
    else if (std::isnan(w[i])) ok = std::isnan(g[i]);
    else if (std::isinf(w[i])) ok = g[i] == w[i];
    else ok = std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i]);
    if (!ok) {
      if (bad++ == 0) first = i;
      if (!std::isnan(g[i]) && std::isfinite(w[i])) worst = std::max(worst, std::fabs(g[i] - w[i]));
    }
  }
  if (bad == 0) return "";
  return fmt::format("{} of {} elements differ (first at {}: {} where ONNX wants {}; max abs diff {:.3g})",
                     bad, w.size(), first, g[first], w[first], worst);
}

Result run_case(dlrt::Context& ctx, const fs::path& dir, const std::string& kind,
                const std::string& device, double rtol, double atol) {
  Result r;
  r.name = dir.filename().string();
  r.device = device;
  r.op = op_of(dir / "model.onnx", kind, r.name);
  try {
    if (fs::exists(dir / "NOT_TENSORS")) {
      r.verdict = Verdict::kUnsupported;
      r.reason = "inputs or outputs are sequences, maps or optionals (dlrt has tensors)";
      return r;
    }
    dlrt::SessionOptions so;
    so.device = device;
    so.soft_placement = false;
    dlrt::InferenceSession session(ctx, (dir / "model.onnx").string(), so);
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
        sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    const size_t n_in = session.inputs().size();
    const size_t host = ctx.find_device("CPU:0");
    for (const fs::path& ds : sets) {
      std::vector<dlrt::Tensor> inputs;
      for (size_t i = 0; i < n_in; ++i) {
        const fs::path p = ds / fmt::format("input_{}.pb", i);
        if (!fs::exists(p)) {  // an optional input left out
          r.verdict = Verdict::kUnsupported;
          r.reason = fmt::format("the data set gives fewer inputs than the model declares ({})", n_in);
          return r;
        }
        HostTensor t = read_pb(p, session.inputs()[i].dtype);
        if (t.element_count() == 0) {
          r.verdict = Verdict::kUnsupported;
          r.reason = "an empty input tensor (dlrt has no zero-sized tensors)";
          return r;
        }
        dlrt::Tensor x = dlrt::Tensor::create(ctx, host, t.dtype, t.dims);
        dlrt::check(dlrt_tensor_write(x.get(), t.bytes.data(), t.bytes.size()));
        inputs.push_back(std::move(x));
      }
      std::vector<const dlrt::Tensor*> feeds;
      for (const dlrt::Tensor& t : inputs) feeds.push_back(&t);
      std::vector<dlrt::Tensor> out = session.run(feeds);
      for (size_t k = 0; k < out.size(); ++k) {
        const HostTensor want = read_pb(ds / fmt::format("output_{}.pb", k), out[k].dtype());
        std::vector<uint8_t> bytes(out[k].byte_size());
        dlrt::check(dlrt_tensor_read(out[k].get(), bytes.data(), bytes.size()));
        const std::string diff = compare(want, bytes, out[k].dtype(), out[k].dims(), rtol, atol);
        if (!diff.empty()) {
          r.verdict = Verdict::kFail;
          r.reason = fmt::format("{}: output {}: {}", ds.filename().string(), k, diff);
          return r;
        }
      }
    }
  } catch (const dlrt::Error& e) {
    // UNIMPLEMENTED: dlrt has no converter, dtype or form for it. A strict-placement refusal
    // ("requested CPU:0 which cannot run it") says the device's plugin lacks the kernel.
    const bool unsupported = e.code() == DLRT_UNIMPLEMENTED ||
                             e.message().find("which cannot run it") != std::string::npos;
    r.verdict = unsupported ? Verdict::kUnsupported : Verdict::kFail;
    r.reason = e.what();
  } catch (const dlrt::core::Error& e) {
    r.verdict = e.code() == DLRT_UNIMPLEMENTED ? Verdict::kUnsupported : Verdict::kFail;
    r.reason = std::string(dlrt_code_name(e.code())) + ": " + e.message();
  }
  return r;
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '|') c = ' ';
  if (s.size() > 240) s = s.substr(0, 237) + "...";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dlrt-onnx-suite: ONNX's conformance cases through dlrt::InferenceSession"};
  std::string cases, kind = "node", filter, report, devices_arg;
  double min_pass = 0.0, rtol = 1e-3, atol = 1e-7;
  bool verbose = false;
  app.add_option("--cases", cases, "folder generate_cases.py wrote")->required();
  app.add_option("--kind", kind, "node or light")->check(CLI::IsMember({"node", "light"}));
  app.add_option("--filter", filter, "only cases whose name contains this");
  app.add_option("--devices", devices_arg, "comma-separated device specs (default: CPU:0 and GPU:0 when present)");
  app.add_option("--report", report, "write per-op counts and every failure as Markdown");
  app.add_option("--min-pass", min_pass, "fail unless at least this fraction of cases pass (0..1)");
  app.add_option("--rtol", rtol, "relative tolerance");
  app.add_option("--atol", atol, "absolute tolerance");
  app.add_flag("-v,--verbose", verbose, "print every case");
  CLI11_PARSE(app, argc, argv);

  // Linked with the core's objects (not libdlrt.so), so the default plugin folder beside
  // libdlrt does not apply: the build tree's plugins, unless DLRT_PLUGIN_PATH names others.
  dlrt::ContextOptions copts;
  if (std::getenv("DLRT_PLUGIN_PATH") == nullptr) copts.plugin_path(DLRT_SUITE_PLUGIN_DIR);
  dlrt::Context ctx(copts);
  std::vector<std::string> devices;
  if (devices_arg.empty()) {
    devices.push_back("CPU:0");
    for (const auto& d : ctx.devices())
      if (d.type == "GPU" && d.index == 0) devices.push_back("GPU:0");
  } else {
    size_t p = 0;
    while (p <= devices_arg.size()) {
      const size_t q = std::min(devices_arg.find(',', p), devices_arg.size());
      if (q > p) devices.push_back(devices_arg.substr(p, q - p));
      p = q + 1;
    }
  }
  const fs::path root = fs::path(cases) / kind;
  if (!fs::is_directory(root)) {
    std::cerr << "dlrt-onnx-suite: no folder " << root << " (run generate_cases.py --out " << cases << ")\n";
    return 2;
  }
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && e.path().filename().string().find(filter) != std::string::npos)
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());

  std::string onnx_version = "?";
  {
    std::ifstream v(fs::path(cases) / "ONNX_VERSION");
    std::getline(v, onnx_version);
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Result> results;
  for (const std::string& dev : devices)
    for (const fs::path& d : dirs) {
      results.push_back(run_case(ctx, d, kind, dev, rtol, atol));
      const Result& r = results.back();
      if (verbose || r.verdict == Verdict::kFail)
        std::cout << (r.verdict == Verdict::kPass ? "pass" : r.verdict == Verdict::kFail ? "FAIL" : "unsupported")
                  << " " << dev << " " << r.name << (r.reason.empty() ? "" : ": " + one_line(r.reason)) << "\n";
    }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  struct Counts { int pass = 0, fail = 0, unsupported = 0; };
  std::map<std::string, std::map<std::string, Counts>> per_device_op;
  std::map<std::string, Counts> per_device;
  for (const Result& r : results) {
    Counts& c = per_device_op[r.device][r.op];
    Counts& t = per_device[r.device];
    if (r.verdict == Verdict::kPass) ++c.pass, ++t.pass;
    else if (r.verdict == Verdict::kFail) ++c.fail, ++t.fail;
    else ++c.unsupported, ++t.unsupported;
  }
  bool ok = true;
  for (const auto& [dev, t] : per_device) {
    const int n = t.pass + t.fail + t.unsupported;
    const double rate = n ? double(t.pass) / n : 0.0;
    std::cout << fmt::format("dlrt-onnx-suite: {} {} cases on {}: {} pass ({:.1f}%), {} fail, {} unsupported ({:.0f} s, onnx {})\n",
                             n, kind, dev, t.pass, 100 * rate, t.fail, t.unsupported, secs, onnx_version);
    if (t.fail > 0 || rate < min_pass) ok = false;
  }
  if (!report.empty()) {
    std::ofstream out(report);
    out << "<!-- written by dlrt-onnx-suite --report; do not edit -->\n";
    for (const auto& [dev, ops] : per_device_op) {
      const Counts& t = per_device[dev];
      const int n = t.pass + t.fail + t.unsupported;
      out << fmt::format("\n### {} cases on {} (onnx {})\n\n{} cases: **{} pass ({:.1f}%)**, {} fail, {} unsupported.\n\n",
                         kind, dev, onnx_version, n, t.pass, n ? 100.0 * t.pass / n : 0.0, t.fail, t.unsupported);
      out << "| op | pass | fail | unsupported |\n|---|---|---|---|\n";
      for (const auto& [op, c] : ops) out << fmt::format("| {} | {} | {} | {} |\n", op, c.pass, c.fail, c.unsupported);
      out << "\n<details><summary>Every case that did not pass, with the reason</summary>\n\n";
      out << "| case | verdict | reason |\n|---|---|---|\n";
      for (const Result& r : results)
        if (r.device == dev && r.verdict != Verdict::kPass)
          out << fmt::format("| {} | {} | {} |\n", r.name, r.verdict == Verdict::kFail ? "**fail**" : "unsupported",
                             one_line(r.reason));
      out << "\n</details>\n";
    }
  }
  return ok ? 0 : 1;
}
