// prim_matmul.cc: matmul on oneDNN's matmul primitive.
//
//   matmul           a (M,K), b (K,N)            -> c (M,N)
//   matmul_bias_act  a, b, bias (N)              -> c = act(a·b + bias)
// transpose_a: a is stored (K,M); transpose_b: b is stored (N,K).
//
// A transpose costs nothing: the memory descriptor keeps the logical dims oneDNN wants,
// (M,K) and (K,N), and its strides say how the buffer is stored — a stored (K,M) is (M,K) with
// strides (1,M). The bias is a (1,N) operand broadcast over the rows, the activation an
// eltwise post-op, so the fused op is one pass over c.
//
//   batch_matmul     a (..., M, K), b (..., K, N) -> c (..., M, N), batch dims broadcast
// is the same primitive with rank-R descriptors: oneDNN's matmul takes batch dims and
// broadcasts a size-1 batch dim of either operand, which is numpy's rule once both are padded
// with leading 1s to c's rank (batch_matmul_geom.hpp).
//
// bf16: where oneDNN has AVX512-BF16 and every operand is bf16, the same primitives run in
// bf16 (f32 accumulation, one rounding of c); elsewhere ops.cc widens (widening_kernel.hpp).

#include "batch_matmul_geom.hpp"
#include "prim_common.hpp"

namespace dlrt::cpu::prim {
namespace {

struct MatmulGeom {
  int64_t m = 0, k = 0, n = 0;
  bool ta = false, tb = false;
  memory::data_type dt = memory::data_type::f32;  // every operand's (bf16: see the check)
};

// f32, or bf16 when the check let a bf16 op through (require_f32_or_native_bf16).
memory::data_type data_type_of(const OpView& op) {
  return op.input(0).dtype == DLRT_BF16 ? memory::data_type::bf16 : memory::data_type::f32;
}

// m, k, n from a, the flags and c as the descriptor states them (the schema checked them).
MatmulGeom matmul_geom(const OpView& op) {
  const TensorView& a = op.input(0);
  MatmulGeom g;
  g.ta = op.get_bool("transpose_a");
  g.tb = op.get_bool("transpose_b");
  g.k = g.ta ? a.dims[0] : a.dims[1];
  g.m = op.output(0).dims[0];
  g.n = op.output(0).dims[1];
  g.dt = data_type_of(op);
  return g;
}

// Logical (rows, cols), stored transposed or not.
memory::desc matrix_md(int64_t rows, int64_t cols, bool transposed, memory::data_type dt) {
  return memory::desc({rows, cols}, dt, transposed ? memory::dims{1, rows} : memory::dims{cols, 1});
}

class Matmul : public PrimKernel {
 public:
  Matmul(const dlrt_plugin& p, const OpView& op, const MatmulGeom& g) : PrimKernel(p, op) {
    const bool fused = op.num_inputs() == 3;
    const memory::desc a = matrix_md(g.m, g.k, g.ta, g.dt), b = matrix_md(g.k, g.n, g.tb, g.dt),
                       c = matrix_md(g.m, g.n, false, g.dt);
    const dnnl::primitive_attr attr = scratchpad_and_activation(op, fused);
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, input(0, a)}, {DNNL_ARG_WEIGHTS, input(1, b)}, {DNNL_ARG_DST, output(0, c)}};
    dnnl::matmul::primitive_desc pd;
    if (fused) {
      const memory::desc bias = matrix_md(1, g.n, false, g.dt);
      pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, bias, c), attr, engine_);
      args.emplace(DNNL_ARG_BIAS, input(2, bias));
    } else {
      pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr, engine_);
    }
    add_step(dnnl::matmul(pd), std::move(args), pd.scratchpad_desc());
  }
};

// A stored operand of logical dims (bdims..., rows, cols), row-major in its stored order, the
// last two swapped when transposed: strides say where each logical element lives.
memory::desc batched_md(const std::vector<int64_t>& bdims, int64_t rows, int64_t cols,
                        bool transposed, memory::data_type dt) {
  memory::dims dims(bdims.begin(), bdims.end()), strides(bdims.size() + 2);
  dims.push_back(rows);
  dims.push_back(cols);
  const size_t r = dims.size();
  strides[r - 2] = transposed ? 1 : cols;
  strides[r - 1] = transposed ? rows : 1;
  int64_t step = rows * cols;
  for (size_t d = r - 2; d-- > 0;) {
    strides[d] = step;
    step *= dims[d];
  }
  return memory::desc(dims, dt, strides);
}

class BatchMatmul : public PrimKernel {
 public:
  BatchMatmul(const dlrt_plugin& p, const OpView& op, const plugin::BatchMatmulGeom& g)
      : PrimKernel(p, op) {
    const memory::data_type dt = data_type_of(op);
    const memory::desc a = batched_md(g.a_bdims, g.m, g.k, g.ta, dt),
                       b = batched_md(g.b_bdims, g.k, g.n, g.tb, dt),
                       c = batched_md(g.batch, g.m, g.n, false, dt);
    dnnl::primitive_attr attr = user_scratchpad();
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, input(0, a)}, {DNNL_ARG_WEIGHTS, input(1, b)}, {DNNL_ARG_DST, output(0, c)}};
    auto pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr, engine_);
    add_step(dnnl::matmul(pd), std::move(args), pd.scratchpad_desc());
  }
};

}  // namespace

void batch_matmul_check(const OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost) {
  require_f32_or_native_bf16(op, p);
  const plugin::BatchMatmulGeom g = plugin::batch_matmul_geom(op);
  fill_cost(op, p, 2.0 * double(g.batch_count()) * g.m * g.n * g.k, cost);
}

std::unique_ptr<Kernel> batch_matmul_create(const dlrt_plugin& p, const OpView& op) {
  return make_kernel<BatchMatmul>(p, op, plugin::batch_matmul_geom(op));
}

void matmul_check(const OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost) {
  require_f32_or_native_bf16(op, p);
  const MatmulGeom g = matmul_geom(op);
  if (op.name() == "matmul_bias_act") {
    dnnl::algorithm unused{};
    activation(op, &unused);
  }
  fill_cost(op, p, 2.0 * g.m * g.n * g.k, cost);
}

std::unique_ptr<Kernel> matmul_create(const dlrt_plugin& p, const OpView& op) {
  return make_kernel<Matmul>(p, op, matmul_geom(op));
}

DLRT_CPU_KERNELS(t) {
  for (const char* op : {"matmul", "matmul_bias_act"})
    t.push_back({op, matmul_check, matmul_create});
  t.push_back({"batch_matmul", batch_matmul_check, batch_matmul_create});
}

}  // namespace dlrt::cpu::prim
