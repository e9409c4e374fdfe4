// core/ops/op_examples.cc: the example table, one row per op (shapes as docs/ops.md names them).
#include "op_examples.hpp"

#include <fmt/format.h>

#include <map>
#include <string>

namespace dlrt::ops {
namespace {

TensorType f32(Dims dims) { return {DLRT_F32, std::move(dims)}; }
TensorType i32(Dims dims) { return {DLRT_I32, std::move(dims)}; }

using Table = std::map<std::string, OpExample, std::less<>>;

Table build_table() {
  Table t;
  // Images: x (N,H,W,C) = (1,8,8,3); filter HWIO (3,3,3,4); VALID conv gives (1,6,6,4);
  // 2x2/2 pooling gives (1,4,4,3).
  const TensorType x = f32({1, 8, 8, 3}), w = f32({3, 3, 3, 4}), y = f32({1, 6, 6, 4}),
                   pooled = f32({1, 4, 4, 3});
  t["conv2d"] = {{x, w}, {}};
  t["conv2d_bias_act"] = {{x, w, f32({4})}, {{"activation", "relu"}}};
  t["max_pool2d"] = {{x}, {}};
  t["avg_pool2d"] = {{x}, {}};
  t["conv2d_backward_data"] = {{y, w}, {{"input_shape", Ints{1, 8, 8, 3}}}};
  t["conv2d_backward_filter"] = {{x, y}, {{"filter_shape", Ints{3, 3, 3, 4}}}};
  t["max_pool2d_backward"] = {{x, pooled}, {}};
  t["avg_pool2d_backward"] = {{pooled}, {{"input_shape", Ints{1, 8, 8, 3}}}};

  // Everything else works on small matrices (2,3).
  const TensorType m = f32({2, 3});
  for (const char* op : {"relu", "sigmoid", "tanh", "neg", "exp", "log", "sqrt", "copy",
                         "softmax", "log_softmax", "reduce_sum", "reduce_mean", "reduce_max",
                         "argmax", "bias_add_grad"})
    t[op] = {{m}, {}};
  for (const char* op : {"add", "sub", "mul", "div", "relu_grad", "sigmoid_grad", "tanh_grad"})
    t[op] = {{m, m}, {}};
  t["bias_add"] = {{m, f32({3})}, {}};
  t["reduce_max_grad"] = {{m, f32({}), f32({})}, {}};  // reduce over all axes gives ()
  t["broadcast_to"] = {{f32({1, 3})}, {{"shape", Ints{2, 3}}}};
  t["reshape"] = {{m}, {{"shape", Ints{3, 2}}}};
  t["flatten"] = {{f32({2, 3, 2})}, {}};
  t["transpose"] = {{m}, {{"perm", Ints{1, 0}}}};
  t["matmul"] = {{m, f32({3, 4})}, {}};
  t["matmul_bias_act"] = {{m, f32({3, 4}), f32({4})}, {{"activation", "relu"}}};
  t["sparse_softmax_cross_entropy"] = {{m, i32({2})}, {}};
  t["equal_count"] = {{i32({4}), i32({4})}, {}};
  for (const char* op : {"fill", "random_uniform", "random_normal"})
    t[op] = {{}, {{"shape", Ints{2, 3}}}};
  t["dropout"] = {{m}, {{"rate", 0.5}}};
  t["cast"] = {{m}, {{"dtype", DLRT_I32}}};
  t["gather_rows"] = {{f32({4, 3}), i32({2})}, {}};
  t["sgd_update"] = {{m, m, m}, {{"learning_rate", 0.1}}};
  t["adam_update"] = {{m, m, m, m, f32({})}, {}};
  return t;
}

const Table& table() {
  static const Table t = build_table();
  return t;
}

}  // namespace

const OpExample* find_example(std::string_view op) {
  auto it = table().find(op);
  return it == table().end() ? nullptr : &it->second;
}

Result<OpInstance> instantiate_example(std::string_view op) {
  const OpExample* e = find_example(op);
  if (e == nullptr) return Status(DLRT_NOT_FOUND, fmt::format("op '{}' has no example", op));
  return instantiate(op, e->inputs, e->attrs);
}

}  // namespace dlrt::ops
