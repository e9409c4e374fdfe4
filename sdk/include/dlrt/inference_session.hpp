// dlrt/inference_session.hpp: InferenceSession, an ONNX model loaded for inference
// (dlrt_session_*; docs/onnx.md), as onnxruntime's InferenceSession:
//
//   dlrt::Context ctx;
//   dlrt::InferenceSession session(ctx, "model.onnx");          // checked and imported here
//   for (const auto& in : session.inputs()) std::cout << in.name << "\n";
//   dlrt::Tensor x = dlrt::Tensor::create(ctx, 0, DLRT_F32, {64, 3, 224, 224});
//   x.write(pixels);
//   std::vector<dlrt::Tensor> y = session.run({&x});             // outputs in model order
//   std::map<std::string, dlrt::Tensor> named = session.run_named({{"input", &x}});
//
// Symbolic dims ("N") take the fed tensor's; each new set of input shapes is imported and
// compiled once and kept (at most SessionOptions::max_cached_shapes).
#ifndef DLRT_INFERENCE_SESSION_HPP_
#define DLRT_INFERENCE_SESSION_HPP_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dlrt/context.hpp"
#include "dlrt/error.hpp"
#include "dlrt/executable.hpp"
#include "dlrt/tensor.hpp"

namespace dlrt {

// dlrt_session_options; unset fields take the defaults.
struct SessionOptions {
  std::string device;                       // "" / "auto": auto placement; else a device spec
  std::optional<bool> soft_placement;       // unset: the context's
  std::optional<bool> log_device_placement; // unset: the context's
  int max_cached_shapes = 0;                // <= 0: 8
  bool optimize = true;  // NHWC convolutions and the graph passes (dlrt_session_options)
};

// A model input or output (dlrt_session_io): dims -1 where symbolic, named in dim_names.
struct SessionIo {
  std::string name;
  dlrt_dtype dtype = DLRT_F32;
  bool has_shape = false;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_names;
};

class InferenceSession {
 public:
  InferenceSession(const Context& context, const std::string& path,
                   const SessionOptions& options = {}) {
    const Options c(options);
    dlrt_session* raw = nullptr;
    check(dlrt_session_create_from_onnx(context.get(), path.c_str(), &c.c, &raw));
    handle_.reset(raw);
  }
  // From the bytes of a model (no external data).
  static InferenceSession from_bytes(const Context& context, const void* data, size_t size,
                                     const SessionOptions& options = {}) {
    const Options c(options);
    dlrt_session* raw = nullptr;
    check(dlrt_session_create_from_onnx_bytes(context.get(), data, size, &c.c, &raw));
    return InferenceSession(raw);
  }
  explicit InferenceSession(dlrt_session* adopted) noexcept : handle_(adopted) {}
  InferenceSession(InferenceSession&&) noexcept = default;
  InferenceSession& operator=(InferenceSession&&) noexcept = default;
  InferenceSession(const InferenceSession&) = delete;
  InferenceSession& operator=(const InferenceSession&) = delete;

  dlrt_session* get() const noexcept { return handle_.get(); }

  std::vector<SessionIo> inputs() const { return ios(true); }
  std::vector<SessionIo> outputs() const { return ios(false); }

  // Inputs in inputs() order (any device); one new tensor per output, in outputs() order.
  std::vector<Tensor> run(const std::vector<const Tensor*>& inputs) {
    std::vector<const dlrt_tensor*> in;
    for (const Tensor* t : inputs) in.push_back(t != nullptr ? t->get() : nullptr);
    std::vector<dlrt_tensor*> out(dlrt_session_output_count(get()), nullptr);
    check(dlrt_session_run(get(), in.empty() ? nullptr : in.data(), in.size(),
                           out.empty() ? nullptr : out.data(), out.size()));
    std::vector<Tensor> result;
    for (dlrt_tensor* t : out) result.emplace_back(t);
    return result;
  }
  // By name: every input named once (Error INVALID_ARGUMENT naming a missing or unknown one);
  // the outputs by name.
  std::map<std::string, Tensor> run_named(const std::map<std::string, const Tensor*>& named) {
    const std::vector<SessionIo> ins = inputs();
    std::vector<const Tensor*> ordered;
    for (const SessionIo& io : ins) {
      auto it = named.find(io.name);
      if (it == named.end())
        throw Error(DLRT_INVALID_ARGUMENT, "run: input '" + io.name + "' is not given");
      ordered.push_back(it->second);
    }
    for (const auto& kv : named) {
      bool known = false;
      for (const SessionIo& io : ins) known = known || io.name == kv.first;
      if (!known) throw Error(DLRT_INVALID_ARGUMENT, "run: the model has no input '" + kv.first + "'");
    }
    std::vector<Tensor> out = run(ordered);
    const std::vector<SessionIo> outs = outputs();
    std::map<std::string, Tensor> result;
    for (size_t k = 0; k < out.size(); ++k) result.emplace(outs[k].name, std::move(out[k]));
    return result;
  }

  // The executable of the latest run (placement, dumps, profiling); empty before any.
  // Not owned: valid as dlrt_session_executable says.
  dlrt_executable* executable() const { return dlrt_session_executable(get()); }
  std::string placement_log() const {
    dlrt_executable* e = executable();
    if (e == nullptr) return "";
    size_t n = 0;
    check(dlrt_executable_dump(e, DLRT_DUMP_LOG, nullptr, 0, &n));
    std::string text(n + 1, '\0');
    check(dlrt_executable_dump(e, DLRT_DUMP_LOG, &text[0], text.size(), &n));
    text.resize(n);
    return text;
  }

 private:
  struct Options {
    explicit Options(const SessionOptions& o) {
      dlrt_session_options_init(&c);
      device = o.device;
      c.device = device.c_str();
      if (o.soft_placement) c.soft_placement = *o.soft_placement ? 1 : 0;
      if (o.log_device_placement) c.log_device_placement = *o.log_device_placement ? 1 : 0;
      c.max_cached_shapes = o.max_cached_shapes;
      c.optimize = o.optimize ? 1 : 0;
    }
    std::string device;
    dlrt_session_options c;
  };
  std::vector<SessionIo> ios(bool in) const {
    const size_t n = in ? dlrt_session_input_count(get()) : dlrt_session_output_count(get());
    std::vector<SessionIo> out;
    for (size_t i = 0; i < n; ++i) {
      dlrt_session_io c{};
      c.struct_size = DLRT_STRUCT_SIZE(dlrt_session_io);
      check(in ? dlrt_session_input(get(), i, &c) : dlrt_session_output(get(), i, &c));
      SessionIo io;
      io.name = c.name;
      io.dtype = static_cast<dlrt_dtype>(c.dtype);
      io.has_shape = c.has_shape != 0;
      for (int32_t k = 0; k < c.rank; ++k) {
        io.dims.push_back(c.dims[k]);
        io.dim_names.push_back(c.dim_names[k] != nullptr ? c.dim_names[k] : "");
      }
      out.push_back(std::move(io));
    }
    return out;
  }
  detail::Owner<dlrt_session> handle_;
};

}  // namespace dlrt

#endif  // DLRT_INFERENCE_SESSION_HPP_
