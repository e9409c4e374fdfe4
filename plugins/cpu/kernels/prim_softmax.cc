// prim_softmax.cc: softmax and log_softmax on oneDNN primitives.
//
//   softmax | log_softmax               x (any rank >= 1)  -> y (same), along `axis`
//
// They are oneDNN's softmax_forward and logsoftmax_forward (both subtract the max). The
// reductions left this file for loop_reduce.cc (why: that file's header).

#include "prim_common.hpp"

namespace dlrt::cpu::prim {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

int softmax_axis(const OpView& op) {
  return plugin::normalize_axis(op.get_int("axis"), op.input(0).rank(), op.name());
}

class Softmax : public PrimKernel {
 public:
  Softmax(const dlrt_plugin& p, const OpView& op, int axis) : PrimKernel(p, op) {
    const memory::desc md = plain_md(op.input(0).dims);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, input(0, md)},
                                            {DNNL_ARG_DST, output(0, md)}};
    if (op.name() == "log_softmax") {
      dnnl::logsoftmax_forward::primitive_desc pd(
          dnnl::logsoftmax_forward::desc(prop_kind::forward_inference, md, axis), user_scratchpad(),
          engine_);
      add_step(dnnl::logsoftmax_forward(pd), std::move(args), pd.scratchpad_desc());
    } else {
      dnnl::softmax_forward::primitive_desc pd(
          dnnl::softmax_forward::desc(prop_kind::forward_inference, md, axis), user_scratchpad(),
          engine_);
      add_step(dnnl::softmax_forward(pd), std::move(args), pd.scratchpad_desc());
    }
  }
};

}  // namespace

void softmax_check(const OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost) {
  require_f32(op);
  softmax_axis(op);
  fill_cost(op, p, 5.0 * static_cast<double>(op.input(0).numel), cost);
}

std::unique_ptr<Kernel> softmax_create(const dlrt_plugin& p, const OpView& op) {
  return make_kernel<Softmax>(p, op, softmax_axis(op));
}

DLRT_CPU_KERNELS(t) {
  for (const char* op : {"softmax", "log_softmax"})
    t.push_back({op, softmax_check, softmax_create});
}

}  // namespace dlrt::cpu::prim
