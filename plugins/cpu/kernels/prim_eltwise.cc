// prim_eltwise.cc: activations and bias_add on oneDNN's eltwise and binary primitives.
//
//   relu, sigmoid, tanh and the activations of core/ops/infer_activation.cc
//                           x (any shape)          -> y (same)     eltwise forward
//   their <op>_grad, leaky_relu_grad
//                           dy, x                  -> dx           eltwise backward on src
//   sigmoid_grad            dy, y                  -> dx = dy * y * (1-y)
//   tanh_grad               dy, y                  -> dx = dy * (1-y²)
//   bias_add                x (...,C), b (C)       -> y = x + b    (NCHW: b along dim 1)
//
// Each op's row in kEltwiseOps below names its algorithm with alpha and beta (leaky_relu and
// elu: alpha; silu: swish with alpha 1; clip: alpha = min, beta = max; rsqrt: pow with alpha 1,
// beta -1/2; softplus_grad: soft_relu's backward).
//
// Element-wise ops see every tensor as one flat vector (its shape does not matter).
// sigmoid_grad and tanh_grad are eltwise backward primitives reading the forward output y
// (eltwise_*_use_dst_for_bwd), which is exactly what the ops are given; leaky_relu_grad is
// given x, the SRC of eltwise_relu's backward pass. bias_add is a binary add
// whose b operand has dims 1 except C (oneDNN broadcasts it). relu_grad is a loop kernel
// (loop_elementwise.cc): oneDNN's eltwise backward pass takes about twice the time of one
// vectorised pass over dy, x and dx (docs/benchmarks.md, "Kernel choices").

#include <algorithm>

#include "prim_common.hpp"

namespace dlrt::cpu::prim {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

struct EltwiseInfo {
  algorithm alg;
  bool backward;
  double flops_per_element;
  float alpha = 0;         // the algorithm's alpha: leaky_relu's/elu's alpha, clip's min
  bool reads_src = false;  // backward input 1 is x (SRC) rather than y (DST)
  float beta = 0;          // the algorithm's beta: clip's max, pow's exponent
};

float attr_f(const OpView& op, const char* name) { return static_cast<float>(op.get_float(name)); }

// gelu and gelu_grad: the erf form or the tanh approximation.
algorithm gelu_alg(const OpView& op) {
  const std::string& a = op.get_string("approximate");
  if (a == "none") return algorithm::eltwise_gelu_erf;
  if (a == "tanh") return algorithm::eltwise_gelu_tanh;
  op.invalid("approximate is \"" + a + "\", expected \"none\" or \"tanh\"");
}

// One op on oneDNN's eltwise primitives: its name and how its instance maps to an algorithm
// with alpha and beta. The table is the whole of an op's wiring here: eltwise_info looks the
// row up by name, and the rows block at the end adds a kernel row per entry.
struct EltwiseOp {
  const char* name;
  EltwiseInfo (*info)(const OpView& op);
};

const EltwiseOp kEltwiseOps[] = {
    {"relu",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_relu, false, 1};
     }},
    {"leaky_relu",
     [](const OpView& op) -> EltwiseInfo {
       return {algorithm::eltwise_relu, false, 2, attr_f(op, "alpha")};
     }},
    {"leaky_relu_grad",
     [](const OpView& op) -> EltwiseInfo {
       return {algorithm::eltwise_relu, true, 2, attr_f(op, "alpha"), true};
     }},
    // The activations of infer_activation.cc; their _grad ops pass x as SRC.
    {"elu",
     [](const OpView& op) -> EltwiseInfo {
       return {algorithm::eltwise_elu, false, 10, attr_f(op, "alpha")};
     }},
    {"elu_grad",
     [](const OpView& op) -> EltwiseInfo {
       return {algorithm::eltwise_elu, true, 10, attr_f(op, "alpha"), true};
     }},
    {"gelu",
     [](const OpView& op) -> EltwiseInfo {
       return {gelu_alg(op), false, 20};
     }},
    {"gelu_grad",
     [](const OpView& op) -> EltwiseInfo {
       return {gelu_alg(op), true, 30, 0, true};
     }},
    {"silu",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_swish, false, 10, 1.0f};
     }},
    {"silu_grad",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_swish, true, 15, 1.0f, true};
     }},
    {"hard_swish",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_hardswish, false, 4};
     }},
    {"hard_swish_grad",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_hardswish, true, 4, 0, true};
     }},
    {"softplus_grad",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_soft_relu, true, 12, 0, true};
     }},
    {"mish",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_mish, false, 20};
     }},
    {"mish_grad",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_mish, true, 30, 0, true};
     }},
    // oneDNN refuses min > max; clip(x, max, max) is the same function then: max everywhere.
    {"clip",
     [](const OpView& op) -> EltwiseInfo {
       const float hi = attr_f(op, "max");
       return {algorithm::eltwise_clip, false, 2, std::min(attr_f(op, "min"), hi), false, hi};
     }},
    {"abs",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_abs, false, 1};
     }},
    {"abs_grad",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_abs, true, 2, 0, true};
     }},
    {"square",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_square, false, 1};
     }},
    {"rsqrt",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_pow, false, 10, 1.0f, false, -0.5f};
     }},
    {"sigmoid",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_logistic, false, 10};
     }},
    {"tanh",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_tanh, false, 10};
     }},
    {"sigmoid_grad",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_logistic_use_dst_for_bwd, true, 3};
     }},
    {"tanh_grad",
     [](const OpView&) -> EltwiseInfo {
       return {algorithm::eltwise_tanh_use_dst_for_bwd, true, 3};
     }},
};

EltwiseInfo eltwise_info(const OpView& op) {
  for (const EltwiseOp& e : kEltwiseOps)
    if (op.name() == e.name) return e.info(op);
  op.unimplemented("not an eltwise op of the cpu plugin");
}

class EltwiseForward : public PrimKernel {
 public:
  EltwiseForward(const dlrt_plugin& p, const OpView& op, const EltwiseInfo& e) : PrimKernel(p, op) {
    const memory::desc md = flat_md(op.input(0));
    dnnl::eltwise_forward::primitive_desc pd(
        dnnl::eltwise_forward::desc(prop_kind::forward_inference, e.alg, md, e.alpha, e.beta),
        user_scratchpad(), engine_);
    add_step(dnnl::eltwise_forward(pd),
             {{DNNL_ARG_SRC, input(0, md)}, {DNNL_ARG_DST, output(0, md)}}, pd.scratchpad_desc());
  }
};

class EltwiseBackward : public PrimKernel {
 public:
  EltwiseBackward(const dlrt_plugin& p, const OpView& op, const EltwiseInfo& e)
      : PrimKernel(p, op) {
    const memory::desc md = flat_md(op.input(0));
    dnnl::eltwise_forward::primitive_desc hint(
        dnnl::eltwise_forward::desc(prop_kind::forward_training, e.alg, md, e.alpha, e.beta),
        engine_);
    dnnl::eltwise_backward::primitive_desc pd(
        dnnl::eltwise_backward::desc(e.alg, md, md, e.alpha, e.beta), user_scratchpad(), engine_,
        hint);
    // Input 1 is y, the DST of the *_use_dst_for_bwd algorithms, or x (SRC) for the others.
    add_step(dnnl::eltwise_backward(pd),
             {{DNNL_ARG_DIFF_DST, input(0, md)},
              {e.reads_src ? DNNL_ARG_SRC : DNNL_ARG_DST, input(1, md)},
              {DNNL_ARG_DIFF_SRC, output(0, md)}},
             pd.scratchpad_desc());
  }
};

// The axis of x that b adds along: 1 for NCHW, the last for NHWC.
int bias_axis(const OpView& op) {
  return op.get_string("data_format") == "NCHW" ? 1 : op.input(0).rank() - 1;
}

class BiasAdd : public PrimKernel {
 public:
  BiasAdd(const dlrt_plugin& p, const OpView& op, int axis) : PrimKernel(p, op) {
    const std::vector<int64_t>& dims = op.input(0).dims;
    std::vector<int64_t> bdims(dims.size(), 1);
    bdims[axis] = dims[axis];
    const memory::desc x = plain_md(dims), b = plain_md(bdims);
    dnnl::binary::primitive_desc pd(dnnl::binary::desc(algorithm::binary_add, x, b, x),
                                    user_scratchpad(), engine_);
    add_step(dnnl::binary(pd),
             {{DNNL_ARG_SRC_0, input(0, x)},
              {DNNL_ARG_SRC_1, input(1, b)},
              {DNNL_ARG_DST, output(0, x)}},
             pd.scratchpad_desc());
  }
};

}  // namespace

void eltwise_check(const OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost) {
  const EltwiseInfo e = eltwise_info(op);
  require_f32(op);
  fill_cost(op, p, e.flops_per_element * static_cast<double>(op.input(0).numel), cost);
}

std::unique_ptr<Kernel> eltwise_create(const dlrt_plugin& p, const OpView& op) {
  const EltwiseInfo e = eltwise_info(op);
  if (e.backward) return make_kernel<EltwiseBackward>(p, op, e);
  return make_kernel<EltwiseForward>(p, op, e);
}

void bias_add_check(const OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost) {
  require_f32(op);
  bias_axis(op);
  fill_cost(op, p, static_cast<double>(op.input(0).numel), cost);
}

std::unique_ptr<Kernel> bias_add_create(const dlrt_plugin& p, const OpView& op) {
  return make_kernel<BiasAdd>(p, op, bias_axis(op));
}

DLRT_CPU_KERNELS(t) {
  for (const EltwiseOp& e : kEltwiseOps) t.push_back({e.name, eltwise_check, eltwise_create});
  t.push_back({"bias_add", bias_add_check, bias_add_create});
}

}  // namespace dlrt::cpu::prim
