// prim_concat.cc: concat on oneDNN's concat primitive.
//
//   concat   x0, x1, ... (equal dims but on axis) -> y   f32: dnnl::concat on plain row-major
//                                                        descs; any other dtype: the memcpy
//                                                        loop of loop_cut_join.cc
//
// The axis is the core's normalised one (0..rank-1). oneDNN's concat takes the inputs as
// DNNL_ARG_MULTIPLE_SRC + i, so the op's N inputs need no ABI change: the plugin receives
// them as the descriptor's num_inputs operands.

#include "loop_cut_join.hpp"
#include "prim_common.hpp"

namespace dlrt::cpu::prim {
namespace {

class ConcatPrim : public PrimKernel {
 public:
  ConcatPrim(const dlrt_plugin& p, const OpView& op) : PrimKernel(p, op) {
    const int axis = static_cast<int>(op.get_int("axis"));
    std::vector<memory::desc> srcs;
    for (size_t i = 0; i < op.num_inputs(); ++i) srcs.push_back(plain_md(op.input(i).dims));
    const memory::desc dst = plain_md(op.output(0).dims);
    dnnl::concat::primitive_desc pd(dst, axis, srcs, engine_, user_scratchpad());
    std::unordered_map<int, memory> args{{DNNL_ARG_DST, output(0, dst)}};
    for (size_t i = 0; i < srcs.size(); ++i)
      args.emplace(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), input(i, srcs[i]));
    add_step(dnnl::concat(pd), std::move(args), pd.scratchpad_desc());
  }
};

}  // namespace

// Any dtype: f32 on the primitive, the rest on the loop; nothing to refuse.
void concat_check(const OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost) {
  fill_cost(op, p, 0, cost);
}

std::unique_ptr<Kernel> concat_create(const dlrt_plugin& p, const OpView& op) {
  if (op.output(0).dtype != DLRT_F32) return loops::make_concat_loop(p, op);
  return make_kernel<ConcatPrim>(p, op);
}

DLRT_CPU_KERNELS(t) { t.push_back({"concat", concat_check, concat_create}); }

}  // namespace dlrt::cpu::prim
