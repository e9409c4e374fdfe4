// core/ops/infer_common.hpp: shorthands shared by the op tables in infer_*.cc.
// Internal to core/ops (not part of the registry's API).
#pragma once

#include <string>
#include <utility>

#include "op_def.hpp"
#include "op_registry.hpp"

namespace dlrt::ops::detail {

// The floats and f64: ops whose kernels on the reference and cpu devices compute f64 as well
// (exp, log, the reductions), so ONNX models of DOUBLE tensors run there; cuda declines f64.
inline const DtypeSet kFloatAndF64Types = {DLRT_F32, DLRT_F16, DLRT_BF16, DLRT_F64};

// An input in the tables: in("x", kFloatTypes, "(N,H,W,C)").
inline InputSpec in(std::string name, DtypeSet dtypes, std::string shape = "",
                    char type_var = 'T') {
  return InputSpec{std::move(name), std::move(dtypes), std::move(shape), type_var, true};
}
// An input autodiff does not propagate into (labels, indices, gradients of backward ops).
inline InputSpec in_const(std::string name, DtypeSet dtypes, std::string shape = "",
                          char type_var = 'T') {
  return InputSpec{std::move(name), std::move(dtypes), std::move(shape), type_var, false};
}
inline OutputSpec out(std::string name, std::string shape = "") {
  return OutputSpec{std::move(name), std::move(shape)};
}

// Where N, H, W and C sit in an image of either data_format:
//   NHWC (N,H,W,C) -> {0,1,2,3};  NCHW (N,C,H,W) -> {0,2,3,1}.
struct ImageAxes {
  int n, h, w, c;
  const char* dims_doc;  // "(N,H,W,C)"
};
inline ImageAxes image_axes(const std::string& data_format) {
  return data_format == "NCHW" ? ImageAxes{0, 2, 3, 1, "(N,C,H,W)"}
                               : ImageAxes{0, 1, 2, 3, "(N,H,W,C)"};
}
inline Dims make_image(const ImageAxes& ax, int64_t n, int64_t h, int64_t w, int64_t c) {
  Dims d(4);
  d[ax.n] = n;
  d[ax.h] = h;
  d[ax.w] = w;
  d[ax.c] = c;
  return d;
}

inline AttrSpec data_format_attr() {
  return optional_attr("data_format", "NHWC").one_of({"NHWC", "NCHW"});
}
inline AttrSpec padding_attr() {
  return optional_attr("padding", "VALID").one_of({"VALID", "SAME", "EXPLICIT"});
}
// (h_before, w_before, h_after, w_after), ONNX's order; set by the core on every instance.
inline AttrSpec pads_attr() {
  return optional_attr("pads", Ints{0, 0, 0, 0}).exactly(4).at_least(0);
}
inline AttrSpec activation_attr() {
  return optional_attr("activation", "none").one_of({"none", "relu", "sigmoid", "tanh"});
}

// Unary ops whose output is the input's type: relu, exp, copy, ...
Status infer_same_as_input0(InferContext& ctx);
// a, b -> c of a's dtype and NumPy's broadcast shape of a and b ((3,1,5) and (4,5) -> (3,4,5)).
Status infer_broadcast_binary(InferContext& ctx);
// dy, x (or y) of one shape -> dx of that shape and dy's dtype (the activation gradients).
Status infer_activation_grad(InferContext& ctx);

}  // namespace dlrt::ops::detail
