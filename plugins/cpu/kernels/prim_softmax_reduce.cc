// prim_softmax_reduce.cc: softmax/log_softmax and the reductions on oneDNN primitives.
//
//   softmax | log_softmax               x (any rank >= 1)  -> y (same), along `axis`
//   reduce_sum | reduce_mean | reduce_max  x               -> y, over `axes` ([] = all), keepdims
//
// softmax and log_softmax are oneDNN's softmax_forward and logsoftmax_forward (both subtract
// the max). A reduction is oneDNN's reduction primitive with dst dims = x's dims with the
// reduced axes set to 1: dropping size-1 dims (keepdims false) does not move any element, so
// the same buffer serves either output shape. When nothing is reduced (every reduced axis has
// size 1, or x is a scalar) the op is a copy, done with a reorder, since oneDNN's reduction
// wants at least one axis to shrink.
#include "prim_softmax_reduce.hpp"

#include "prim_common.hpp"

namespace dlrt::cpu::prim {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

int softmax_axis(const OpView& op) {
  require_arity(op, 1, 1);
  const TensorView& x = op.input(0);
  if (x.rank() < 1) op.invalid("input 0 (x) must have rank >= 1, is a scalar");
  require_output_dims(op, 0, x.dims);
  return plugin::normalize_axis(op.get_int("axis"), x.rank(), op.name());
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

// x's dims with the reduced axes set to 1 (x a scalar: (1)); checks the output's dims.
std::vector<int64_t> reduced_dims(const OpView& op) {
  require_arity(op, 1, 1);
  const TensorView& x = op.input(0);
  const auto& axes = op.get_ints("axes");
  std::vector<bool> reduced(x.dims.size(), axes.empty());
  for (int64_t a : axes) {
    const int i = plugin::normalize_axis(a, x.rank(), op.name());
    if (reduced[i] && !axes.empty()) op.invalid("axis " + std::to_string(a) + " is given twice");
    reduced[i] = true;
  }
  std::vector<int64_t> keep, drop;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    keep.push_back(reduced[i] ? 1 : x.dims[i]);
    if (!reduced[i]) drop.push_back(x.dims[i]);
  }
  require_output_dims(op, 0, op.get_bool("keepdims") ? keep : drop);
  return keep.empty() ? std::vector<int64_t>{1} : keep;
}

class Reduce : public PrimKernel {
 public:
  Reduce(const dlrt_plugin& p, const OpView& op, const std::vector<int64_t>& ydims)
      : PrimKernel(p, op) {
    const std::vector<int64_t> xdims =
        op.input(0).dims.empty() ? std::vector<int64_t>{1} : op.input(0).dims;
    const memory::desc x = plain_md(xdims), y = plain_md(ydims);
    if (xdims == ydims) {  // nothing shrinks: a copy
      dnnl::reorder::primitive_desc pd(engine_, x, engine_, y, user_scratchpad());
      add_step(dnnl::reorder(pd), {{DNNL_ARG_FROM, input(0, x)}, {DNNL_ARG_TO, output(0, y)}},
               pd.scratchpad_desc());
      return;
    }
    const algorithm alg = op.name() == "reduce_sum"    ? algorithm::reduction_sum
                          : op.name() == "reduce_mean" ? algorithm::reduction_mean
                                                       : algorithm::reduction_max;
    dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(alg, x, y, 0.0f, 0.0f),
                                       user_scratchpad(), engine_);
    add_step(dnnl::reduction(pd), {{DNNL_ARG_SRC, input(0, x)}, {DNNL_ARG_DST, output(0, y)}},
             pd.scratchpad_desc());
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

void reduce_check(const OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost) {
  require_f32(op);
  reduced_dims(op);
  fill_cost(op, p, static_cast<double>(op.input(0).numel), cost);
}

std::unique_ptr<Kernel> reduce_create(const dlrt_plugin& p, const OpView& op) {
  return make_kernel<Reduce>(p, op, reduced_dims(op));
}

}  // namespace dlrt::cpu::prim
