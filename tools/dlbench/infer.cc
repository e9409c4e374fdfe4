// infer.cc: `dlbench infer MODEL.onnx [--compare-ort]`: an ONNX model in a dlrt
// InferenceSession at each batch size (default 1 and 64): the first run (import + compile),
// latency percentiles and throughput; with --compare-ort the same model, inputs and thread
// count in onnxruntime (ort_infer.py, in a venv), the figures side by side and the outputs
// compared.
//
// Both runtimes are timed the same way: a few warm-up runs, then runs timed one by one until
// at least --min-runs runs and --min-seconds have passed; p50/p99 are nearest-rank
// percentiles of those runs, images/s is batch / mean run time. A dlrt run is
// InferenceSession::run with the inputs already on the device, outputs made by the run, as
// onnxruntime's session.run returns new arrays.
#include <dlrt/inference_session.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include "../dlrun/npy.hpp"
#include "bench.hpp"
#include "onnx_batch.hpp"
#include "torch_run.hpp"

namespace dlbench {

namespace fs = std::filesystem;

namespace {

struct Timing {
  std::vector<double> ms;  // sorted
  double first_ms = 0;     // session creation + the first run
};

double percentile(const std::vector<double>& sorted_ms, double q) {
  const double n = static_cast<double>(sorted_ms.size());
  int64_t k = static_cast<int64_t>(std::ceil(q / 100.0 * n)) - 1;
  k = std::max<int64_t>(0, std::min<int64_t>(k, static_cast<int64_t>(sorted_ms.size()) - 1));
  return sorted_ms[static_cast<size_t>(k)];
}

json timing_json(const Timing& t, int64_t batch) {
  double sum = 0;
  for (double v : t.ms) sum += v;
  const double mean = sum / static_cast<double>(t.ms.size());
  return json{{"runs", t.ms.size()},
              {"load_and_first_run_ms", t.first_ms},
              {"p50_ms", percentile(t.ms, 50)},
              {"p99_ms", percentile(t.ms, 99)},
              {"mean_ms", mean},
              {"min_ms", t.ms.front()},
              {"images_per_s", static_cast<double>(batch) * 1e3 / mean}};
}

// A model input's random contents at the largest batch: f32/f64 uniform in [-1, 1), u8/i8
// uniform over their range; batch b uses the first b samples (dim 0 is outermost).
struct InputData {
  dlrt_dtype dtype;
  std::vector<int64_t> sample_dims;  // dims without the batch
  size_t sample_bytes = 0;
  std::vector<uint8_t> bytes;
};

std::vector<InputData> make_inputs(const std::vector<dlrt::SessionIo>& ios, int64_t max_batch,
                                   uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<InputData> out;
  for (const dlrt::SessionIo& io : ios) {
    if (!io.has_shape || io.dims.empty())
      throw std::runtime_error("input '" + io.name +
                               "' has no shape or rank 0; dlbench infer needs (batch, ...)");
    InputData d;
    d.dtype = io.dtype;
    int64_t per_sample = 1;
    for (size_t k = 1; k < io.dims.size(); ++k) {
      if (io.dims[k] < 0)
        throw std::runtime_error("input '" + io.name + "' dim " + std::to_string(k) + " ('" +
                                 io.dim_names[k] +
                                 "') is symbolic; dlbench infer sets only the batch (dim 0)");
      d.sample_dims.push_back(io.dims[k]);
      per_sample *= io.dims[k];
    }
    const size_t n = static_cast<size_t>(per_sample * max_batch);
    d.sample_bytes = static_cast<size_t>(per_sample) * dlrt_dtype_size(io.dtype);
    d.bytes.resize(n * dlrt_dtype_size(io.dtype));
    if (io.dtype == DLRT_F32 || io.dtype == DLRT_F64) {
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      for (size_t i = 0; i < n; ++i) {
        if (io.dtype == DLRT_F32)
          reinterpret_cast<float*>(d.bytes.data())[i] = static_cast<float>(u(rng));
        else
          reinterpret_cast<double*>(d.bytes.data())[i] = u(rng);
      }
    } else if (io.dtype == DLRT_U8 || io.dtype == DLRT_I8 || io.dtype == DLRT_U16 ||
               io.dtype == DLRT_I16) {  // pixels, audio samples: any bit pattern is a value
      for (uint8_t& b : d.bytes) b = static_cast<uint8_t>(rng());
    } else {
      throw std::runtime_error("input '" + io.name + "' is " + dlrt_dtype_name(io.dtype) +
                               "; dlbench infer makes f32, f64, u8, i8, u16 and i16 inputs");
    }
    out.push_back(std::move(d));
  }
  return out;
}

// A tensor's elements as doubles (for comparing outputs); empty for dtypes it does not read.
std::vector<double> as_doubles(dlrt_dtype dtype, const uint8_t* p, size_t bytes) {
  std::vector<double> v;
  auto take = [&](auto tag) {
    using T = decltype(tag);
    const size_t n = bytes / sizeof(T);
    v.resize(n);
    for (size_t i = 0; i < n; ++i) {
      T x;
      std::memcpy(&x, p + i * sizeof(T), sizeof(T));
      v[i] = static_cast<double>(x);
    }
  };
  switch (dtype) {
    case DLRT_F32: take(float{}); break;
    case DLRT_F64: take(double{}); break;
    case DLRT_I64: take(int64_t{}); break;
    case DLRT_I32: take(int32_t{}); break;
    case DLRT_U8: case DLRT_BOOL: take(uint8_t{}); break;
    case DLRT_I8: take(int8_t{}); break;
    case DLRT_U16: take(uint16_t{}); break;
    case DLRT_I16: take(int16_t{}); break;
    case DLRT_U32: take(uint32_t{}); break;
    case DLRT_U64: take(uint64_t{}); break;
    default: break;
  }
  return v;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// One batch size's dlrt side: the session, its outputs (as doubles) and the timing.
struct BatchRun {
  int64_t batch = 0;
  BatchedModel model;
  Timing timing;
  std::vector<std::string> output_names;
  std::vector<std::vector<double>> outputs;
  std::vector<std::vector<int64_t>> output_dims;
};

template <typename Run>
std::vector<double> time_runs(Run&& run, const InferOptions& o) {
  for (int i = 0; i < o.warmup; ++i) run();
  std::vector<double> ms;
  const double start = now_us();
  while (static_cast<int64_t>(ms.size()) < o.max_runs &&
         (static_cast<int64_t>(ms.size()) < o.min_runs || now_us() - start < o.min_seconds * 1e6)) {
    const double t0 = now_us();
    run();
    ms.push_back((now_us() - t0) / 1e3);
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

std::string ort_python(const InferOptions& o) {
  auto imports_ort = [](const std::string& python) {
    return dlbench::shell_status(dlbench::quoted(python) +
                                 " -c 'import onnxruntime, numpy' >/dev/null 2>&1") == 0;
  };
  if (o.ort_venv.empty()) {
    if (!imports_ort(o.python))
      throw std::runtime_error("--compare-ort: " + o.python +
                               " cannot import onnxruntime and numpy; let dlbench make a venv "
                               "with them from PyPI (--ort-venv DIR) or pass --python");
    return o.python;
  }
  const std::string python = (fs::path(o.ort_venv) / "bin" / "python3").string();
  if (fs::exists(python) && imports_ort(python)) return python;
  std::fprintf(stderr, "dlbench: --ort-venv %s: installing onnxruntime with pip (once)\n",
               o.ort_venv.c_str());
  // The versions tools/onnx-suite/requirements.txt pins, so every machine times the same one.
  const std::string cmd = "{ " + dlbench::quoted(o.python) + " -m venv " + dlbench::quoted(o.ort_venv) + " && " +
                          dlbench::quoted(python) + " -m pip install onnxruntime==1.32.0 numpy==2.2.6; } 1>&2";
  if (dlbench::shell_status(cmd) != 0 || !imports_ort(python))
    throw std::runtime_error("--ort-venv " + o.ort_venv +
                             ": setting up a venv with onnxruntime failed (see pip's output "
                             "above); fix it by hand (" + python +
                             " -m pip install onnxruntime numpy) or pass --python");
  return python;
}

}  // namespace

json run_infer(const InferOptions& o) {
  if (o.batches.empty()) throw std::runtime_error("--batch: give at least one batch size");
  const int threads = o.threads > 0 ? o.threads
                                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string python;
  fs::path script;
  if (o.compare_ort) {  // checked first, so a missing onnxruntime costs no wait
    python = ort_python(o);
    script = own_dir() / "dlbench_ort_infer.py";
    if (!fs::exists(script))
      throw std::runtime_error("--compare-ort: " + script.string() +
                               " is missing (the build and the install copy it next to dlbench)");
  }
  // Where the models and inputs for onnxruntime go: --work-dir, or a fresh temporary folder
  // removed at the end.
  const bool own_work = o.compare_ort && o.work_dir.empty();
  const fs::path work = own_work ? fs::temp_directory_path() /
                                       ("dlbench-infer-" + std::to_string(::getpid()))
                                 : fs::path(o.work_dir);
  struct Cleanup {
    bool on;
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      if (on) fs::remove_all(dir, ec);
    }
  } cleanup{own_work, work};
  dlrt::Context ctx = make_context(threads, o.plugin_options);
  const size_t device = find_device(ctx, o.device);
  json doc;
  doc["mode"] = "infer";
  doc["model"] = o.model;
  doc["threads"] = threads;
  doc["device"] = device_json(ctx.devices()[device]);
  doc["load_average_before"] = load_average();

  const int64_t max_batch = *std::max_element(o.batches.begin(), o.batches.end());
  std::vector<InputData> data;
  std::vector<BatchRun> runs;
  dlrt::SessionOptions so;
  so.device = o.device;
  for (int64_t batch : o.batches) {
    BatchRun r;
    r.batch = batch;
    r.model = model_for_batch(o.model, batch);
    const double t0 = now_us();
    dlrt::InferenceSession session =
        r.model.rewritten
            ? dlrt::InferenceSession::from_bytes(ctx, r.model.bytes.data(), r.model.bytes.size(), so)
            : dlrt::InferenceSession(ctx, o.model, so);
    const std::vector<dlrt::SessionIo> ins = session.inputs();
    if (data.empty()) data = make_inputs(ins, max_batch, o.seed);
    std::vector<dlrt::Tensor> tensors;
    std::vector<const dlrt::Tensor*> feed;
    for (const InputData& d : data) {
      std::vector<int64_t> dims{batch};
      dims.insert(dims.end(), d.sample_dims.begin(), d.sample_dims.end());
      tensors.push_back(dlrt::Tensor::create(ctx, device, d.dtype, dims));
      dlrt::check(dlrt_tensor_write(tensors.back().get(), d.bytes.data(),
                                    d.sample_bytes * static_cast<size_t>(batch)));
    }
    for (const dlrt::Tensor& t : tensors) feed.push_back(&t);
    std::vector<dlrt::Tensor> first = session.run(feed);
    r.timing.first_ms = (now_us() - t0) / 1e3;
    const std::vector<dlrt::SessionIo> outs = session.outputs();
    for (size_t k = 0; k < first.size(); ++k) {
      std::vector<uint8_t> bytes(first[k].byte_size());
      dlrt::check(dlrt_tensor_read(first[k].get(), bytes.data(), bytes.size()));
      r.output_names.push_back(outs[k].name);
      r.outputs.push_back(as_doubles(first[k].dtype(), bytes.data(), bytes.size()));
      r.output_dims.push_back(first[k].dims());
    }
    r.timing.ms = time_runs([&] { session.run(feed); }, o);
    if (o.compare_ort) {  // the model and inputs onnxruntime reads
      const fs::path folder = fs::path(work.string()) / ("b" + std::to_string(batch));
      fs::create_directories(folder);
      if (r.model.rewritten) {
        std::ofstream(folder / "model.onnx", std::ios::binary) << r.model.bytes;
      } else {
        std::error_code ec;
        fs::remove(folder / "model.onnx", ec);
        fs::create_symlink(fs::absolute(o.model), folder / "model.onnx");  // external data
      }
      for (size_t k = 0; k < data.size(); ++k) {
        dlrt::npy::Array a;
        a.dtype = data[k].dtype;
        a.dims = tensors[k].dims();
        a.bytes.assign(data[k].bytes.begin(),
                       data[k].bytes.begin() + static_cast<std::ptrdiff_t>(
                                                   data[k].sample_bytes * static_cast<size_t>(batch)));
        dlrt::npy::write((folder / ("in" + std::to_string(k) + ".npy")).string(), a);
      }
    }
    runs.push_back(std::move(r));
  }
  doc["load_average_after"] = load_average();

  json ort;
  if (o.compare_ort) {
    std::string batches;
    for (int64_t b : o.batches) batches += (batches.empty() ? "" : ",") + std::to_string(b);
    doc["load_average_before_ort"] = load_average();
    ort = run_twin_json(dlbench::quoted(python) + " " + dlbench::quoted(script.string()) + " --dir " +
                            dlbench::quoted(work.string()) + " --batches " + batches + " --threads " +
                            std::to_string(threads) + " --warmup " + std::to_string(o.warmup) +
                            " --min-runs " + std::to_string(o.min_runs) + " --min-seconds " +
                            std::to_string(o.min_seconds) + " --max-runs " +
                            std::to_string(o.max_runs),
                        "dlbench_ort_infer.py");
    doc["load_average_after_ort"] = load_average();
    doc["onnxruntime"] = ort["onnxruntime"];
  }

  const BatchRun* single = nullptr;
  for (const BatchRun& r : runs)
    if (r.batch == 1) single = &r;
  for (size_t i = 0; i < runs.size(); ++i) {
    const BatchRun& r = runs[i];
    json b;
    b["batch"] = r.batch;
    b["rewritten_from_batch"] = r.model.rewritten ? json(r.model.original_batch) : json(nullptr);
    b["dlrt"] = timing_json(r.timing, r.batch);
    // The first sample of this batch against the batch-1 run of the same sample: checks that
    // the batch rewrite (onnx_batch.hpp) kept each sample's result.
    if (single != nullptr && r.batch > 1) {
      double m = 0;
      for (size_t k = 0; k < r.outputs.size(); ++k) {
        if (r.output_dims[k].empty() || r.output_dims[k][0] != r.batch) continue;
        m = std::max(m, max_abs_diff(r.outputs[k], single->outputs[k], single->outputs[k].size()));
      }
      b["first_sample_vs_batch_1_max_abs_diff"] = m;
    }
    if (o.compare_ort) {
      const json& ob = ort["batches"][i];
      b["onnxruntime"] = ob;
      b["dlrt_speedup_p50"] = ob["p50_ms"].get<double>() / b["dlrt"]["p50_ms"].get<double>();
      b["dlrt_speedup_images_per_s"] =
          b["dlrt"]["images_per_s"].get<double>() / ob["images_per_s"].get<double>();
      json diffs = json::object();
      const fs::path folder = fs::path(work.string()) / ("b" + std::to_string(r.batch));
      for (size_t k = 0; k < r.outputs.size(); ++k) {
        const dlrt::npy::Array a =
            dlrt::npy::read((folder / ("ort_out" + std::to_string(k) + ".npy")).string());
        const std::vector<double> theirs = as_doubles(a.dtype, a.bytes.data(), a.bytes.size());
        if (theirs.size() != r.outputs[k].size() || theirs.empty()) {
          diffs[r.output_names[k]] = "not compared (different sizes or dtype)";
          continue;
        }
        diffs[r.output_names[k]] = max_abs_diff(r.outputs[k], theirs, theirs.size());
      }
      b["outputs_max_abs_diff_vs_onnxruntime"] = diffs;
    }
    doc["batches"].push_back(b);
  }
  return doc;
}

}  // namespace dlbench
