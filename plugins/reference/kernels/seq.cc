// seq.cc: the oracle's kernels for the sequence ops of core/ops/infer_seq.cc: plain loops.
//
//   one_hot  y[i, d] = on_value if indices[i] == d else off_value; an id outside [0, D)
//            gives a row of off_value (TF's behaviour; docs/ops.md)
#include <string>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

// indices: (I...) -> y: (I..., D) of f32|i32|i64 (on/off values converted as cast does)
void run_one_hot(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const TensorView& ids = op.input(0);
  const TensorView& y = op.output(0);
  const int64_t depth = op.get_int("depth");
  const double on = op.get_float("on_value"), off = op.get_float("off_value");
  for (int64_t i = 0; i < ids.numel; ++i) {
    const int64_t id = load_index(in[0], ids.dtype, i);
    for (int64_t d = 0; d < depth; ++d) store_double(out[0], y.dtype, i * depth + d, id == d ? on : off);
  }
}

void check_one_hot(const OpView& op) {
  const int32_t t = op.output(0).dtype;
  if (t != DLRT_F32 && t != DLRT_I32 && t != DLRT_I64)
    op.unimplemented(std::string("y: dtype ") + plugin::dtype_name(t) +
                     " is not handled (f32, i32, i64)");
}

}  // namespace

void add_seq_kernels(KernelTable& t) {
  t.push_back({"one_hot", run_one_hot, check_one_hot});
}

}  // namespace dlrt::reference::detail
