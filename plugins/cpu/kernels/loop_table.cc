// loop_table.cc: the cpu plugin's kernel rows for ops built from plain loops parallelised over
// the cores with OpenMP (kernels/loop_*.cc; shared machinery in kernels/loop_util.hpp).
//
//   loop_elementwise.cc  add sub mul div maximum minimum pow neg exp log sqrt softplus sin cos
//                        tan asin acos atan sinh cosh asinh acosh atanh erf ceil floor round
//                        sign relu_grad clip_grad
//                        bias_add_grad reduce_max_grad
//   loop_compare.cc      equal not_equal less less_equal greater greater_equal where
//   loop_shape.cc        copy reshape flatten transpose broadcast_to cast fill
//   loop_random.cc       random_uniform random_normal dropout
//   loop_pool.cc         max_pool2d max_pool2d_backward (rows in prim_pool's table entry)
//   loop_reduce.cc       reduce_sum reduce_mean reduce_max
//   loop_cut_join.cc     split slice slice_grad pad pad_grad (and concat's non-f32 loop)
//   loop_gather.cc       gather scatter_add
//   loop_train.cc        sparse_softmax_cross_entropy argmax equal_count gather_rows
//                        sgd_update adam_update
//   loop_layer_norm.cc   layer_norm layer_norm_grad
//   loop_batch_norm.cc   batch_norm_grad batch_norm_relu_grad (the forward ones: prim_norm.cc)
//   loop_seq.cc          one_hot cumsum top_k
//   loop_attention.cc    causal_mask attention attention_grad (tiled, dnnl_sgemm)
//   loop_multinomial.cc  multinomial
//   loop_rnn.cc          lstm_cell lstm_cell_grad
//   loop_grid_sample.cc  grid_sample grid_sample_grad
#include "../ops.hpp"
#include "loop_cut_join.hpp"
#include "loop_gather.hpp"
#include "loop_util.hpp"

namespace dlrt::cpu {

const std::vector<KernelDef>& loop_kernel_defs() {
  static const std::vector<KernelDef> defs = [] {
    std::vector<KernelDef> t;
    loops::add_elementwise_defs(t);
    loops::add_compare_defs(t);
    loops::add_shape_defs(t);
    loops::add_random_defs(t);
    loops::add_train_defs(t);
    loops::add_reduce_defs(t);
    loops::add_cut_join_defs(t);
    loops::add_gather_defs(t);
    loops::add_layer_norm_defs(t);
    loops::add_batch_norm_defs(t);
    loops::add_batch_norm_train_defs(t);
    loops::add_rnn_defs(t);
    loops::add_seq_defs(t);
    loops::add_attention_defs(t);
    loops::add_multinomial_defs(t);
    loops::add_grid_sample_defs(t);
    return t;
  }();
  return defs;
}

}  // namespace dlrt::cpu
