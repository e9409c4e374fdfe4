// primitive_table.cc: the cpu plugin's kernel rows for ops built from oneDNN primitives, one
// row per op name of docs/ops.md; the kernels live in kernels/prim_<family>.cc.
#include "../ops.hpp"
#include "prim_concat.hpp"
#include "prim_conv.hpp"
#include "prim_eltwise.hpp"
#include "prim_global_pool.hpp"
#include "prim_matmul.hpp"
#include "prim_norm.hpp"
#include "prim_pool.hpp"
#include "prim_resize.hpp"
#include "prim_softmax.hpp"

namespace dlrt::cpu {

const std::vector<KernelDef>& primitive_kernel_defs() {
  using namespace prim;
  static const std::vector<KernelDef> defs = {
      {"conv2d", conv_check, conv_create},
      {"conv2d_bias_act", conv_check, conv_create},
      {"conv2d_backward_data", conv_check, conv_create},
      {"conv2d_backward_data_add", conv_check, conv_create},
      {"conv2d_backward", conv_check, conv_create},
      {"conv2d_backward_filter", conv_check, conv_create},
      {"conv2d_transpose", conv_check, conv_create},
      {"max_pool2d", pool_check, pool_create},
      {"max_pool2d_backward", pool_check, pool_create},
      {"max_pool2d_backward_relu_bias", pool_check, pool_create},
      {"avg_pool2d", pool_check, pool_create},
      {"avg_pool2d_backward", pool_check, pool_create},
      {"matmul", matmul_check, matmul_create},
      {"batch_matmul", batch_matmul_check, batch_matmul_create},
      {"matmul_bias_act", matmul_check, matmul_create},
      {"relu", eltwise_check, eltwise_create},
      {"leaky_relu", eltwise_check, eltwise_create},
      {"leaky_relu_grad", eltwise_check, eltwise_create},
      {"elu", eltwise_check, eltwise_create},
      {"elu_grad", eltwise_check, eltwise_create},
      {"gelu", eltwise_check, eltwise_create},
      {"gelu_grad", eltwise_check, eltwise_create},
      {"silu", eltwise_check, eltwise_create},
      {"silu_grad", eltwise_check, eltwise_create},
      {"hard_swish", eltwise_check, eltwise_create},
      {"hard_swish_grad", eltwise_check, eltwise_create},
      {"softplus_grad", eltwise_check, eltwise_create},
      {"clip", eltwise_check, eltwise_create},
      {"abs", eltwise_check, eltwise_create},
      {"abs_grad", eltwise_check, eltwise_create},
      {"square", eltwise_check, eltwise_create},
      {"rsqrt", eltwise_check, eltwise_create},
      {"sigmoid", eltwise_check, eltwise_create},
      {"tanh", eltwise_check, eltwise_create},
      {"sigmoid_grad", eltwise_check, eltwise_create},
      {"tanh_grad", eltwise_check, eltwise_create},
      {"bias_add", bias_add_check, bias_add_create},
      {"softmax", softmax_check, softmax_create},
      {"log_softmax", softmax_check, softmax_create},
      {"batch_norm", batch_norm_check, batch_norm_create},
      {"concat", concat_check, concat_create},
      {"global_avg_pool2d", global_pool_check, global_pool_create},
      {"global_max_pool2d", global_pool_check, global_pool_create},
      {"global_avg_pool2d_backward", global_pool_check, global_pool_create},
      {"global_max_pool2d_backward", global_pool_check, global_pool_create},
      {"resize", resize_check, resize_create},
      {"resize_grad", resize_check, resize_create},
  };
  return defs;
}

}  // namespace dlrt::cpu
