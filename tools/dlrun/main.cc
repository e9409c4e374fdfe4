// dlrun: runs an ONNX model with dlrt::InferenceSession and says what happened.
//
//   dlrun model.onnx                                   # random inputs (seed printed)
//   dlrun model.onnx --input x=x.npy --save-outputs out/
//   dlrun model.onnx --dim N=64 --bench 100 --device CPU:0 --log-device-placement
//   dlrun model.onnx --json
//
// Prints the model's inputs and outputs (name, dtype, dims, -1/N for symbolic), where it
// placed the model, each output (dims, min/max/mean and the first values; every value with
// --json), and with --bench N the latency percentiles of N timed runs after one warm-up.
// --save-outputs DIR writes DIR/<output name>.npy, characters outside [A-Za-z0-9_.-] of the
// name replaced by '_'. Exit status 1 with the error on stderr when anything fails.
#include <CLI/CLI.hpp>
#include <dlrt/context.hpp>
#include <dlrt/inference_session.hpp>
#include <dlrt/names.hpp>
#include <dlrt/tensor.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>

#include "npy.hpp"

namespace {

std::string dims_text(const std::vector<int64_t>& dims, const std::vector<std::string>& names = {}) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < dims.size(); ++k)
    parts.push_back(dims[k] < 0 ? (k < names.size() && !names[k].empty() ? names[k] : "?") : std::to_string(dims[k]));
  return "(" + fmt::format("{}", fmt::join(parts, ",")) + ")";
}

std::string safe_name(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) c = '_';
  return out.empty() ? "_" : out;
}

std::vector<double> as_doubles(const dlrt::npy::Array& a) {
  const size_t n = a.bytes.size() / dlrt_dtype_size(a.dtype);
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = a.bytes.data() + i * dlrt_dtype_size(a.dtype);
    switch (a.dtype) {
      case DLRT_F32: { float f; std::memcpy(&f, p, 4); v[i] = f; break; }
      case DLRT_F64: { double f; std::memcpy(&f, p, 8); v[i] = f; break; }
      case DLRT_I32: { int32_t f; std::memcpy(&f, p, 4); v[i] = f; break; }
      case DLRT_I64: { int64_t f; std::memcpy(&f, p, 8); v[i] = static_cast<double>(f); break; }
      case DLRT_I8: v[i] = static_cast<int8_t>(*p); break;
      case DLRT_U16: { uint16_t f; std::memcpy(&f, p, 2); v[i] = f; break; }
      case DLRT_I16: { int16_t f; std::memcpy(&f, p, 2); v[i] = f; break; }
      case DLRT_U32: { uint32_t f; std::memcpy(&f, p, 4); v[i] = f; break; }
      case DLRT_U64: { uint64_t f; std::memcpy(&f, p, 8); v[i] = static_cast<double>(f); break; }
      default: v[i] = *p; break;  // u8, bool (f16/bf16 are shown as raw bits)
    }
  }
  return v;
}

// Random contents for an input not given: floats uniform in [0, 1), integers in [0, 10),
// bools 0/1.
dlrt::npy::Array random_input(dlrt_dtype dtype, const std::vector<int64_t>& dims, std::mt19937_64& rng) {
  dlrt::npy::Array a;
  a.dtype = dtype;
  a.dims = dims;
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  a.bytes.resize(n * dlrt_dtype_size(dtype));
  std::uniform_real_distribution<float> u(0, 1);
  for (size_t i = 0; i < n; ++i) {
    uint8_t* p = a.bytes.data() + i * dlrt_dtype_size(dtype);
    const float f = u(rng);
    switch (dtype) {
      case DLRT_F32: std::memcpy(p, &f, 4); break;
      case DLRT_F64: { const double d = f; std::memcpy(p, &d, 8); break; }
      case DLRT_I32: { const int32_t v = static_cast<int32_t>(f * 10); std::memcpy(p, &v, 4); break; }
      case DLRT_I64: { const int64_t v = static_cast<int64_t>(f * 10); std::memcpy(p, &v, 8); break; }
      case DLRT_BOOL: *p = f < 0.5f ? 0 : 1; break;
      case DLRT_U16:
      case DLRT_I16: { const uint16_t v = static_cast<uint16_t>(f * 10); std::memcpy(p, &v, 2); break; }
      case DLRT_U32: { const uint32_t v = static_cast<uint32_t>(f * 10); std::memcpy(p, &v, 4); break; }
      case DLRT_U64: { const uint64_t v = static_cast<uint64_t>(f * 10); std::memcpy(p, &v, 8); break; }
      default: *p = static_cast<uint8_t>(f * 10); break;
    }
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dlrun: run an ONNX model with dlrt"};
  std::string model, device = "auto", save_dir;
  std::vector<std::string> input_args, dim_args;
  int bench = 0;
  uint64_t seed = 0;
  bool log_placement = false, json = false;
  app.add_option("model", model, "the .onnx file")->required();
  app.add_option("--input", input_args, "NAME=FILE.npy (repeatable); inputs not given are random");
  app.add_option("--dim", dim_args, "SYMBOL=SIZE for a symbolic dim (default 1), e.g. N=64");
  app.add_option("--device", device, "auto, or a device spec every op requests (CPU:0, /GPU:0)");
  app.add_option("--bench", bench, "time N runs after one warm-up and print latency percentiles");
  app.add_option("--seed", seed, "seed of the random inputs (default: from the clock, printed)");
  app.add_flag("--log-device-placement", log_placement, "print TensorFlow's placement log");
  app.add_flag("--json", json, "print one JSON object with everything, every output value included");
  app.add_option("--save-outputs", save_dir, "write each output as DIR/<name>.npy");
  CLI11_PARSE(app, argc, argv);

  try {
    if (seed == 0) seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    std::map<std::string, int64_t> dim_values;
    for (const std::string& d : dim_args) {
      const size_t eq = d.find('=');
      if (eq == std::string::npos) throw std::runtime_error("--dim " + d + ": expected SYMBOL=SIZE");
      dim_values[d.substr(0, eq)] = std::stoll(d.substr(eq + 1));
    }
    std::map<std::string, std::string> files;
    for (const std::string& s : input_args) {
      const size_t eq = s.find('=');
      if (eq == std::string::npos) throw std::runtime_error("--input " + s + ": expected NAME=FILE.npy");
      files[s.substr(0, eq)] = s.substr(eq + 1);
    }
    dlrt::Context ctx;
    dlrt::SessionOptions so;
    so.device = device;
    if (log_placement) so.log_device_placement = true;
    dlrt::InferenceSession session(ctx, model, so);
    const auto ins = session.inputs();
    const auto outs = session.outputs();
    for (const auto& kv : files) {
      bool known = false;
      for (const auto& io : ins) known = known || io.name == kv.first;
      if (!known) throw std::runtime_error("--input " + kv.first + ": the model has no input of that name");
    }
    nlohmann::json j;
    j["model"] = model;
    j["seed"] = seed;
    if (!json) std::cout << "model " << model << "\n";
    std::mt19937_64 rng(seed);
    std::vector<dlrt::Tensor> tensors;
    bool any_random = false;
    const size_t host = ctx.find_device("CPU:0");
    for (const auto& io : ins) {
      dlrt::npy::Array a;
      std::string source;
      auto f = files.find(io.name);
      if (f != files.end()) {
        a = dlrt::npy::read(f->second);
        source = f->second;
      } else {
        std::vector<int64_t> dims;
        for (size_t k = 0; k < io.dims.size(); ++k) {
          auto v = dim_values.find(io.dim_names[k]);
          dims.push_back(io.dims[k] >= 0 ? io.dims[k] : (v != dim_values.end() ? v->second : 1));
        }
        a = random_input(io.dtype, dims, rng);
        source = "random";
        any_random = true;
      }
      if (a.dtype != io.dtype)
        throw std::runtime_error(fmt::format("input '{}': {} holds {}; the model wants {}", io.name, source,
                                             dlrt_dtype_name(a.dtype), dlrt_dtype_name(io.dtype)));
      dlrt::Tensor t = dlrt::Tensor::create(ctx, host, a.dtype, a.dims);
      dlrt::check(dlrt_tensor_write(t.get(), a.bytes.data(), a.bytes.size()));
      tensors.push_back(std::move(t));
      j["inputs"].push_back({{"name", io.name}, {"dtype", dlrt_dtype_name(io.dtype)}, {"dims", io.dims},
                             {"fed_dims", a.dims}, {"source", source}});
      if (!json)
        std::cout << fmt::format("input  {} {} {} <- {}{}\n", io.name, dlrt_dtype_name(io.dtype),
                                 dims_text(io.dims, io.dim_names), source,
                                 source == "random" ? " " + dims_text(a.dims) : "");
    }
    for (const auto& io : outs) {
      j["outputs_declared"].push_back({{"name", io.name}, {"dtype", dlrt_dtype_name(io.dtype)}, {"dims", io.dims}});
      if (!json)
        std::cout << fmt::format("output {} {} {}\n", io.name, dlrt_dtype_name(io.dtype),
                                 io.has_shape ? dims_text(io.dims, io.dim_names) : "(any)");
    }
    if (any_random && !json) std::cout << "random inputs: --seed " << seed << "\n";
    std::vector<const dlrt::Tensor*> feeds;
    for (const dlrt::Tensor& t : tensors) feeds.push_back(&t);
    std::vector<dlrt::Tensor> result = session.run(feeds);

    // Where it ran: the devices of the executable's nodes, with counts. The executable is the
    // session's (not owned here), so it is read through the C calls.
    std::map<std::string, int> where;
    dlrt_executable* exe = session.executable();
    for (size_t n = 0; n < dlrt_executable_node_count(exe); ++n) {
      dlrt_node_placement p{};
      p.struct_size = DLRT_STRUCT_SIZE(dlrt_node_placement);
      dlrt::check(dlrt_executable_node_placement(exe, n, &p));
      ++where[p.assigned != nullptr ? p.assigned : "?"];
    }
    size_t len = 0;
    dlrt::check(dlrt_executable_auto_device(exe, nullptr, 0, &len));
    std::string auto_text(len + 1, '\0');
    dlrt::check(dlrt_executable_auto_device(exe, &auto_text[0], auto_text.size(), &len));
    auto_text.resize(len);
    for (const auto& [dev, count] : where) j["placement"][dev] = count;
    if (!auto_text.empty()) j["auto_device"] = auto_text;
    if (!json) {
      std::string line;
      for (const auto& [dev, count] : where) line += fmt::format(" {} ({} nodes)", dev, count);
      std::cout << "placed on" << line << "\n";
      if (!auto_text.empty()) std::cout << "auto: " << auto_text << "\n";
    }

    if (!save_dir.empty()) std::filesystem::create_directories(save_dir);
    for (size_t k = 0; k < result.size(); ++k) {
      dlrt::npy::Array a;
      a.dtype = result[k].dtype();
      a.dims = result[k].dims();
      a.bytes.resize(result[k].byte_size());
      dlrt::check(dlrt_tensor_read(result[k].get(), a.bytes.data(), a.bytes.size()));
      const std::vector<double> v = as_doubles(a);
      double lo = INFINITY, hi = -INFINITY, sum = 0;
      for (double x : v) {
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        sum += x;
      }
      nlohmann::json o = {{"name", outs[k].name}, {"dtype", dlrt_dtype_name(a.dtype)}, {"dims", a.dims},
                          {"min", lo}, {"max", hi}, {"mean", v.empty() ? 0.0 : sum / v.size()}};
      if (json) o["values"] = v;
      if (!save_dir.empty()) {
        const std::string path = (std::filesystem::path(save_dir) / (safe_name(outs[k].name) + ".npy")).string();
        dlrt::npy::write(path, a);
        o["saved"] = path;
      }
      j["outputs"].push_back(o);
      if (!json) {
        std::vector<double> head(v.begin(), v.begin() + std::min<size_t>(v.size(), 6));
        std::cout << fmt::format("{} {} {}: min {:.6g} max {:.6g} mean {:.6g} first [{:.6g}]{}\n", outs[k].name,
                                 dlrt_dtype_name(a.dtype), dims_text(a.dims), lo, hi,
                                 v.empty() ? 0.0 : sum / v.size(), fmt::join(head, ", "),
                                 o.contains("saved") ? " -> " + o["saved"].get<std::string>() : "");
      }
    }
    if (bench > 0) {
      std::vector<dlrt::Tensor> out = session.run(feeds);  // warm-up
      std::vector<double> ms;
      for (int i = 0; i < bench; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        out = session.run(feeds);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(ms.begin(), ms.end());
      auto pct = [&](double p) { return ms[std::min(ms.size() - 1, static_cast<size_t>(p * ms.size()))]; };
      j["latency_ms"] = {{"runs", bench}, {"p50", pct(0.5)}, {"p90", pct(0.9)}, {"p99", pct(0.99)}, {"min", ms.front()}};
      if (!json)
        std::cout << fmt::format("latency over {} runs: p50 {:.3f} ms, p90 {:.3f} ms, p99 {:.3f} ms, min {:.3f} ms\n",
                                 bench, pct(0.5), pct(0.9), pct(0.99), ms.front());
    }
    if (json) std::cout << j.dump(2) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "dlrun: " << e.what() << "\n";
    return 1;
  }
}
