// core/ops/op_registry.hpp: the op set of docs/ops.md, by name.
//
// The registry is built once, on first use (thread-safe), from the per-family tables in
// infer_*.cc, and is immutable afterwards: the OpDef pointers it hands out live as long as
// the process.
#pragma once

#include <string_view>
#include <vector>

#include "op_def.hpp"

namespace dlrt::ops {

// The op named `name`, or nullptr.
const OpDef* find_op(std::string_view name);

// Every op, sorted by name.
std::vector<const OpDef*> all_ops();

// Per-family tables (infer_*.cc); all_ops() is their union. Exposed for tests.
std::vector<OpDef> conv_pool_ops();
std::vector<OpDef> elementwise_ops();
std::vector<OpDef> activation_ops();  // infer_activation.cc
// sin ... atanh, erf, ceil, floor, round, sign (infer_math.cc)
std::vector<OpDef> math_ops();
std::vector<OpDef> comparison_ops();  // infer_compare.cc
std::vector<OpDef> reduce_shape_ops();
std::vector<OpDef> misc_ops();
std::vector<OpDef> train_ops();
std::vector<OpDef> norm_ops();
std::vector<OpDef> shape_ops();        // concat, split, slice, pad (infer_shape_ops.cc)
std::vector<OpDef> global_pool_ops();  // global_avg/max_pool2d (infer_global_pool.cc)
// conv2d_transpose (infer_conv_transpose.cc)
std::vector<OpDef> conv_transpose_ops();
std::vector<OpDef> resize_ops();       // resize, resize_grad (infer_resize.cc)
// grid_sample, grid_sample_grad (infer_grid_sample.cc)
std::vector<OpDef> grid_sample_ops();
std::vector<OpDef> gather_ops();       // gather, scatter_add (infer_gather.cc)
// one_hot, cumsum, top_k (infer_seq.cc)
std::vector<OpDef> seq_ops();
std::vector<OpDef> sampling_ops();  // multinomial (infer_sampling.cc)
std::vector<OpDef> layer_norm_ops();   // layer_norm, layer_norm_grad (infer_layer_norm.cc)
std::vector<OpDef> batch_matmul_ops();  // batch_matmul (infer_batch_matmul.cc)
// causal_mask, attention, attention_grad (infer_attention.cc)
std::vector<OpDef> attention_ops();
std::vector<OpDef> rnn_ops();  // lstm_cell, lstm_cell_grad (infer_rnn.cc)

}  // namespace dlrt::ops
