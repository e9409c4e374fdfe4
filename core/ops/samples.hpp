// core/ops/samples.hpp: the sample builders the op tables (infer_*.cc) attach to their
// OpDefs with OpDef::sampled — one per shape family, written once (samples_<family>.cc).
// Internal to core/ops; what a sample is: sample.hpp.
#pragma once

#include "op_def.hpp"

namespace dlrt::ops::samples {

// ---- elementwise (samples_elementwise.cc) ----
// Unary ops: a scalar, an odd rank-1 length, ranks 3 and 4, input values from `x`; `extra`
// adds edge cases (log of negatives ...).
SampleFn unary(Values x, std::vector<Sample> extra = {});
// Activation gradients (dy, second): the unary shapes, dy uniform, `second` as given.
SampleFn activation_grad(Values second);
// Binary broadcasting ops: same shapes, b into a, a into b, both stretch, rank 0, size 1;
// a from `a`, b from `b`; `extra` adds edge cases.
SampleFn binary(Values b, Values a = uniform(-2, 2), std::vector<Sample> extra = {});
// Comparisons: the binary shapes, a and b integers in [-2, 2] so that ties occur.
SampleFn comparison();
// Extra samples of the binary ops that take kNumericTypes: i32, i64, i8, u8 and f64 operands.
std::vector<Sample> integer_binary();
// where(cond, x, y): cond BOOL, the three broadcast in every direction.
std::vector<Sample> where(const OpDef&);
// bias_add (x, b) and bias_add_grad (dy): NHWC at ranks 1, 2, 4, NCHW at ranks 2 and 4.
SampleFn bias(bool grad);

// ---- conv and pool (samples_conv_pool.cc) ----
enum class ConvPass {
  kForward,
  kBiasAct,
  kBackwardData,
  kBackwardDataAdd,
  kBackwardFilter,
  kBackwardBoth
};
// Eight geometries: batch 1 and 2, odd sizes, Ci/Co not multiples of 8, SAME, VALID and
// EXPLICIT padding, strides, dilations, 1x1 and even kernels, NHWC and NCHW.
SampleFn conv(ConvPass pass);
enum class PoolPass { kMax, kAvg, kMaxBackward, kAvgBackward };
SampleFn pool(PoolPass pass);
// conv2d_transpose (samples_conv_transpose.cc): both formats, strides 1 and 2, VALID, SAME,
// EXPLICIT, dilation, output_padding none/0/1, even kernels, a kernel smaller than the stride.
std::vector<Sample> conv_transpose(const OpDef&);

// ---- reductions and shapes (samples_reduce_shape.cc) ----
enum class ReducePass { kSum, kMean, kMax, kMaxGrad };
SampleFn reduce(ReducePass pass);
std::vector<Sample> broadcast_to(const OpDef&);
std::vector<Sample> reshape(const OpDef&);
std::vector<Sample> flatten(const OpDef&);
std::vector<Sample> transpose(const OpDef&);

// ---- cut, join, frame (samples_shape_ops.cc); global pools (samples_global_pool.cc) ----
std::vector<Sample> concat(const OpDef&);
std::vector<Sample> split(const OpDef&);
std::vector<Sample> slice(const OpDef&);
std::vector<Sample> slice_grad(const OpDef&);
std::vector<Sample> pad(const OpDef&);
std::vector<Sample> pad_grad(const OpDef&);
enum class GlobalPoolPass { kAvg, kMax, kAvgBackward, kMaxBackward };
SampleFn global_pool(GlobalPoolPass pass);
// resize (x) and resize_grad (dy) (samples_resize.cc)
SampleFn resize(bool grad);
// grid_sample (x, grid) and grid_sample_grad (dy, x, grid) (samples_grid_sample.cc)
SampleFn grid_sample(bool grad);
// gather (params, indices) and scatter_add (indices, updates) (samples_gather.cc)
std::vector<Sample> gather(const OpDef&);
std::vector<Sample> scatter_add(const OpDef&);
// the sequence ops of infer_seq.cc (samples_seq.cc)
std::vector<Sample> one_hot(const OpDef&);
std::vector<Sample> cumsum(const OpDef&);
std::vector<Sample> top_k(const OpDef&);
// multinomial (samples_sampling.cc)
std::vector<Sample> multinomial(const OpDef&);

// ---- the rest (samples_misc.cc) ----
SampleFn matmul(bool fused);
std::vector<Sample> softmax(const OpDef&);  // softmax and log_softmax
std::vector<Sample> sparse_xent(const OpDef&);
std::vector<Sample> argmax(const OpDef&);
std::vector<Sample> equal_count(const OpDef&);
std::vector<Sample> fill(const OpDef&);
std::vector<Sample> random_uniform(const OpDef&);
std::vector<Sample> random_normal(const OpDef&);
std::vector<Sample> dropout(const OpDef&);
std::vector<Sample> cast(const OpDef&);
std::vector<Sample> gather_rows(const OpDef&);
std::vector<Sample> copy(const OpDef&);
std::vector<Sample> sgd_update(const OpDef&);
std::vector<Sample> adam_update(const OpDef&);

// ---- normalization (samples_norm.cc) ----
enum class NormPass {
  kInference,
  kTraining,
  kBackward,
  kReluBackward,
  kAddReluTraining,
  kAddReluBackward
};
// Images NHWC and NCHW with odd H/W, batch 1, C not a multiple of 8, rank 2 (N,C), and
// N = H = W = 1 (zero batch variance); the training form also in place.
SampleFn batch_norm(NormPass pass);
// layer_norm (x, gamma, beta) and layer_norm_grad (dy, ...) (samples_layer_norm.cc)
SampleFn layer_norm(bool grad);
// batch_matmul (a, b) (samples_batch_matmul.cc)
std::vector<Sample> batch_matmul(const OpDef&);
// causal_mask, attention (q, k, v) and attention_grad (do, ...) (samples_attention.cc)
std::vector<Sample> causal_mask(const OpDef&);
SampleFn attention(bool grad);

// lstm_cell (zx, h, c, U) and lstm_cell_grad (dh', dc', c, c', act) (samples_rnn.cc)
SampleFn lstm_cell(bool grad);

}  // namespace dlrt::ops::samples
