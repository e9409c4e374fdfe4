// widening_kernel.cc: see widening_kernel.hpp.
#include "widening_kernel.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "convert_16bit.hpp"
#include "narrow_float.hpp"

namespace dlrt::cpu {

namespace {

constexpr size_t kAlign = 64;  // each buffer on its own cache line (and AVX-512 alignment)
size_t aligned(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Below this many elements a conversion runs on the calling thread: forking OpenMP's team
// costs more than the loop.
constexpr size_t kParallelFrom = size_t{1} << 15;

// Splits [0, n) into one contiguous chunk per OpenMP thread.
template <typename Fn>
void for_chunks(size_t n, int threads, Fn&& fn) {
  if (n < kParallelFrom) {
    fn(size_t{0}, n);
    return;
  }
  const int team = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel num_threads(team)
  {
    const size_t parts = static_cast<size_t>(omp_get_num_threads());
    const size_t me = static_cast<size_t>(omp_get_thread_num());
    const size_t begin = n * me / parts, end = n * (me + 1) / parts;
    fn(begin, end);
  }
}

}  // namespace

WideningKernel::WideningKernel(const plugin::OpView& narrow, std::unique_ptr<Kernel> inner,
                               int threads, ConvertIsa convert)
    : inner_(std::move(inner)), threads_(threads), convert_(convert) {
  inner_bytes_ = aligned(inner_->workspace_bytes());
  size_t offset = inner_bytes_;
  auto lay_out = [&](const plugin::TensorView& t) {
    Operand op{t.dtype, static_cast<size_t>(t.numel), 0};
    if (plugin::is_narrow_float(t.dtype)) {
      op.offset = offset;
      offset += aligned(op.numel * sizeof(float));
    }
    return op;
  };
  for (const plugin::TensorView& t : narrow.inputs()) inputs_.push_back(lay_out(t));
  for (const plugin::TensorView& t : narrow.outputs()) outputs_.push_back(lay_out(t));
  total_bytes_ = offset;
  in_.resize(inputs_.size());
  out_.resize(outputs_.size());
}

void WideningKernel::run(dnnl::stream& stream, const dlrt_kernel_args& args) {
  auto* ws = static_cast<uint8_t*>(args.workspace);
  std::vector<const void*>& in = in_;  // sized in the constructor: nothing allocated here
  std::vector<void*>& out = out_;
  std::copy(args.inputs, args.inputs + args.num_inputs, in.begin());
  std::copy(args.outputs, args.outputs + args.num_outputs, out.begin());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Operand& op = inputs_[i];
    if (!plugin::is_narrow_float(op.dtype)) continue;
    auto* wide = reinterpret_cast<float*>(ws + op.offset);
    const auto* src = static_cast<const uint16_t*>(args.inputs[i]);
    for_chunks(op.numel, threads_, [&](size_t b, size_t e) {
      widen_16bit(convert_, op.dtype, src + b, wide + b, e - b);
    });
    in[i] = wide;
  }
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const Operand& op = outputs_[o];
    if (!plugin::is_narrow_float(op.dtype)) continue;
    out[o] = ws + op.offset;
    for (size_t i = 0; i < inputs_.size(); ++i)  // in place: write where the input was widened
      if (plugin::is_narrow_float(inputs_[i].dtype) && args.inputs[i] == args.outputs[o])
        out[o] = const_cast<void*>(in[i]);
  }
  dlrt_kernel_args a = args;
  a.inputs = in.data();
  a.outputs = out.data();
  a.workspace = inner_->workspace_bytes() > 0 ? ws : nullptr;
  a.workspace_bytes = inner_->workspace_bytes();
  inner_->run(stream, a);
  stream.wait();  // the results are read below (a no-op on oneDNN's in-order CPU stream)
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const Operand& op = outputs_[o];
    if (!plugin::is_narrow_float(op.dtype)) continue;
    const auto* wide = static_cast<const float*>(out[o]);
    auto* dst = static_cast<uint16_t*>(args.outputs[o]);
    for_chunks(op.numel, threads_, [&](size_t b, size_t e) {
      narrow_16bit(convert_, op.dtype, wide + b, dst + b, e - b);
    });
  }
}

}  // namespace dlrt::cpu
