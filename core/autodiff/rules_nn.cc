// rules_nn.cc: gradient rules of the network ops — convolution, pooling, matmul, bias,
// activations, softmax, cross-entropy, dropout, batch normalization.
//
// Most map onto the backward ops of docs/ops.md; softmax and log_softmax are written with
// forward ops (there is no softmax_grad op); the fused ops are split back into their parts.
#include <fmt/format.h>

#include "rules.hpp"
#include "status.hpp"

namespace dlrt::core::autodiff {
namespace {

ops::Ints ints_of(const ops::Dims& d) { return ops::Ints(d.begin(), d.end()); }

// y = conv2d(x, w) with dy at y: dx = conv2d_backward_data(dy, w), dw =
// conv2d_backward_filter(x, dy); both take the forward attributes (strides, padding,
// dilations, data_format, groups) plus the shape they produce.
// When both are wanted and x has no other reader, one conv2d_backward gives both (a device
// may share their common work: dlrt's Winograd pass transforms and reads dy once); x read by
// others too keeps the two ops, so that the sum of x's gradient can start in the
// backward-data pass (conv2d_backward_data_add, autodiff.cc).
void conv_backward(GradContext& c, ValueRef dy, const ops::AttrMap& conv_attrs) {
  if (c.needs(0) && c.needs(1) && c.forward_readers(c.input(0)) == 1) {
    std::vector<ValueRef> g =
        c.emit_all("conv2d_backward", "backward", {dy, c.input(0), c.input(1)}, conv_attrs);
    c.set_dx(0, g[0]);
    c.set_dx(1, g[1]);
    return;
  }
  if (c.needs(0)) {
    ops::AttrMap a = conv_attrs;
    a["input_shape"] = ints_of(c.in_dims(0));
    c.set_dx(0, c.emit("conv2d_backward_data", "backward_data", {dy, c.input(1)}, a));
  }
  if (c.needs(1)) {
    ops::AttrMap a = conv_attrs;
    a["filter_shape"] = ints_of(c.in_dims(1));
    c.set_dx(1, c.emit("conv2d_backward_filter", "backward_filter", {c.input(0), dy}, a));
  }
}

void conv2d_rule(GradContext& c) { conv_backward(c, *c.dy(0), c.attrs()); }

// y = act(conv2d(x, w) + b): dz = act'(dy), db = bias_add_grad(dz), then conv2d's rule on dz.
// With a ReLU whose output only a max_pool2d reads (dy is then that pool's
// max_pool2d_backward(y, dy_pool) and nothing else), the three passes over y-sized tensors
// (the pool's backward, relu_grad, bias_add_grad) are one op, max_pool2d_backward_relu_bias;
// the unfused max_pool2d_backward is left unread and compile prunes it.
void conv2d_bias_act_rule(GradContext& c) {
  const Node& from = c.producer(*c.dy(0));
  if (c.attr("activation").as_string() == "relu" && c.needs(2) &&
      from.op == "max_pool2d_backward" && from.inputs.at(0) == c.output(0) &&
      from.attrs.at("data_format") == c.attr("data_format")) {
    const ops::AttrMap pool = from.attrs;  // copied: emitting may move the graph's nodes
    const ValueRef dy_pool = from.inputs.at(1);
    std::vector<ValueRef> g = c.emit_all("max_pool2d_backward_relu_bias", "pool_relu_bias_grad",
                                         {c.output(0), dy_pool}, pool);
    c.set_dx(2, g[1]);
    conv_backward(c, g[0], c.attrs_without({"activation"}));
    return;
  }
  ValueRef dz = activation_input_grad(c, *c.dy(0), c.output(0));
  if (c.needs(2))
    c.set_dx(2,
             c.emit("bias_add_grad", "bias_grad", {dz}, {{"data_format", c.attr("data_format")}}));
  conv_backward(c, dz, c.attrs_without({"activation"}));
}

// max: dy goes to the first max of each window (the op needs x to find it).
void max_pool2d_rule(GradContext& c) {
  c.set_dx(0, c.emit("max_pool2d_backward", "backward", {c.input(0), *c.dy(0)}, c.attrs()));
}

// avg: dy spread evenly over each window's counted cells; needs only x's shape.
void avg_pool2d_rule(GradContext& c) {
  ops::AttrMap a = c.attrs();
  a["input_shape"] = ints_of(c.in_dims(0));
  c.set_dx(0, c.emit("avg_pool2d_backward", "backward", {*c.dy(0)}, a));
}

// C = op(A) . op(B), op = transpose when asked. With dC (M,N):
//   ta tb | dA                      | dB
//   F  F  | dC . B^T                | A^T . dC
//   F  T  | dC . B                  | dC^T . A
//   T  F  | B . dC^T                | A . dC
//   T  T  | B^T . dC^T              | dC^T . A^T
void matmul_backward(GradContext& c, ValueRef dc) {
  const bool ta = c.attr("transpose_a").as_bool(), tb = c.attr("transpose_b").as_bool();
  auto mm = [&](const char* what, ValueRef x, ValueRef y, bool tx, bool ty) {
    return c.emit("matmul", what, {x, y}, {{"transpose_a", tx}, {"transpose_b", ty}});
  };
  const ValueRef a = c.input(0), b = c.input(1);
  if (c.needs(0))
    c.set_dx(0, !ta  ? mm("da", dc, b, false, !tb)
                : tb ? mm("da", b, dc, true, true)
                     : mm("da", b, dc, false, true));
  if (c.needs(1))
    c.set_dx(1, !tb  ? mm("db", a, dc, !ta, false)
                : ta ? mm("db", dc, a, true, true)
                     : mm("db", dc, a, true, false));
}

void matmul_rule(GradContext& c) { matmul_backward(c, *c.dy(0)); }

// batch_matmul: matmul's table per batch element, with batch_matmul (dC has c's rank >= 3, so
// every product is a batch one), then each result — of c's batch dims — summed back over the
// batch dims its operand broadcast (sum_to: missing leading dims and dims of size 1).
void batch_matmul_rule(GradContext& c) {
  const bool ta = c.attr("transpose_a").as_bool(), tb = c.attr("transpose_b").as_bool();
  auto mm = [&](const char* what, ValueRef x, ValueRef y, bool tx, bool ty) {
    return c.emit("batch_matmul", what, {x, y}, {{"transpose_a", tx}, {"transpose_b", ty}});
  };
  const ValueRef a = c.input(0), b = c.input(1), dc = *c.dy(0);
  if (c.needs(0)) {
    ValueRef da = !ta  ? mm("da", dc, b, false, !tb)
                  : tb ? mm("da", b, dc, true, true)
                       : mm("da", b, dc, false, true);
    c.set_dx(0, c.sum_to(da, c.type_of(a).dims, "da_batch_sum"));
  }
  if (c.needs(1)) {
    ValueRef db = !tb  ? mm("db", a, dc, !ta, false)
                  : ta ? mm("db", dc, a, true, true)
                       : mm("db", dc, a, true, false);
    c.set_dx(1, c.sum_to(db, c.type_of(b).dims, "db_batch_sum"));
  }
}

// c = act(a . b + bias): dz = act'(dc), dbias = bias_add_grad(dz) (bias is along the last
// dim), then matmul's rule on dz.
void matmul_bias_act_rule(GradContext& c) {
  ValueRef dz = activation_input_grad(c, *c.dy(0), c.output(0));
  if (c.needs(2)) c.set_dx(2, c.emit("bias_add_grad", "bias_grad", {dz}));
  matmul_backward(c, dz);
}

// y = x + b along the channel axis: dx = dy, db = dy summed over every other axis.
void bias_add_rule(GradContext& c) {
  ValueRef dy = *c.dy(0);
  if (c.needs(0)) c.set_dx(0, dy);
  if (c.needs(1)) c.set_dx(1, c.emit("bias_add_grad", "bias_grad", {dy}, c.attrs()));
}

void relu_rule(GradContext& c) {
  c.set_dx(0, c.emit("relu_grad", "relu_grad", {*c.dy(0), c.input(0)}));
}
// leaky_relu' is 1 above 0 and alpha below: the grad op takes x and the forward's alpha.
void leaky_relu_rule(GradContext& c) {
  c.set_dx(0, c.emit("leaky_relu_grad", "leaky_relu_grad", {*c.dy(0), c.input(0)},
                     {{"alpha", c.attr("alpha")}}));
}
// elu, gelu, silu, hard_swish, softplus, mish, clip, abs: dx = <op>_grad(dy, x) with the forward's
// attributes (alpha, approximate, min/max), one backward op per activation
// (core/ops/infer_activation.cc).
void x_grad_op_rule(GradContext& c) {
  const std::string grad = c.op() + "_grad";
  c.set_dx(0, c.emit(grad, grad, {*c.dy(0), c.input(0)}, c.attrs()));
}
// sigmoid'/tanh' are functions of the output: the grad ops take y.
void sigmoid_rule(GradContext& c) {
  c.set_dx(0, c.emit("sigmoid_grad", "sigmoid_grad", {*c.dy(0), c.output(0)}));
}
void tanh_rule(GradContext& c) {
  c.set_dx(0, c.emit("tanh_grad", "tanh_grad", {*c.dy(0), c.output(0)}));
}

// The softmax Jacobian-vector product: s * (g - sum(g * s, axis, keepdims)).
ValueRef softmax_jvp(GradContext& c, ValueRef s, ValueRef g, int64_t axis,
                     const std::string& what) {
  ValueRef gs = c.emit("mul", what + "_gs", {g, s});
  ValueRef sum =
      c.emit("reduce_sum", what + "_sum", {gs}, {{"axes", ops::Ints{axis}}, {"keepdims", true}});
  ValueRef centred = c.emit("sub", what + "_centred", {g, sum});
  return c.emit("mul", what, {s, centred});
}

// y = softmax(x): dx = y * (dy - sum(dy * y)).
void softmax_rule(GradContext& c) {
  c.set_dx(0, softmax_jvp(c, c.output(0), *c.dy(0), c.attr("axis").as_int(), "dx"));
}

// y = x - logsumexp(x): dx = dy - softmax(x) * sum(dy).
void log_softmax_rule(GradContext& c) {
  const int64_t axis = c.attr("axis").as_int();
  ValueRef dy = *c.dy(0);
  ValueRef s = c.emit("softmax", "softmax", {c.input(0)}, {{"axis", axis}});
  ValueRef sum =
      c.emit("reduce_sum", "dy_sum", {dy}, {{"axes", ops::Ints{axis}}, {"keepdims", true}});
  ValueRef ssum = c.emit("mul", "softmax_dy_sum", {s, sum});
  c.set_dx(0, c.emit("sub", "dx", {dy, ssum}));
}

// loss (N) = logsumexp(logits) - logits[label], backprop (N,K) = softmax(logits) - onehot.
// d logits = backprop * dloss[:, None]; should backprop itself be used downstream, its
// gradient g adds the softmax Jacobian-vector product s * (g - sum(g * s)). Labels get none.
void sparse_xent_rule(GradContext& c) {
  std::optional<ValueRef> dlogits;
  if (c.dy(0)) {
    const int64_t n = c.in_dims(0)[0];
    ValueRef dloss = c.reshape_to(*c.dy(0), {n, 1}, "dloss_column");
    dlogits = c.emit("mul", "dlogits", {c.output(1), dloss});
  }
  if (c.dy(1)) {
    ValueRef s = c.emit("softmax", "softmax", {c.input(0)}, {{"axis", int64_t{-1}}});
    ValueRef j = softmax_jvp(c, s, *c.dy(1), -1, "dlogits_from_backprop");
    dlogits = dlogits ? c.emit("add", "dlogits_sum", {*dlogits, j}) : j;
  }
  c.set_dx(0, *dlogits);
}

// y = x * mask: dx = dy * mask. The mask depends on the seed only, so it passes nothing back.
void dropout_rule(GradContext& c) {
  if (!c.dy(0)) return;
  c.set_dx(0, c.emit("mul", "dx", {*c.dy(0), c.output(1)}));
}

// y = batch_norm_train(x, scale, bias, ...): the batch statistics depend on x, so dx goes
// through them; batch_norm_grad computes dx, dscale and dbias from the statistics the forward
// saved (outputs 3 and 4). The running statistics (inputs 3, 4; outputs 1, 2) are state, not
// a function anyone differentiates: they get no gradient, and gradients reaching outputs 1-4
// are not propagated (PyTorch's native_batch_norm_backward does the same). With activation
// relu the backward op is batch_norm_relu_grad, which rebuilds the ReLU's mask from x, bias
// and the saved statistics (no pass over y, no separate relu_grad).
void batch_norm_train_rule(GradContext& c) {
  if (!c.dy(0)) return;
  const ops::AttrMap a = {{"epsilon", c.attr("epsilon")}, {"data_format", c.attr("data_format")}};
  std::vector<ValueRef> g =
      c.attr("activation").as_string() == "relu"
          ? c.emit_all("batch_norm_relu_grad", "grad",
                       {*c.dy(0), c.input(0), c.input(1), c.input(2), c.output(3), c.output(4)}, a)
          : c.emit_all("batch_norm_grad", "grad",
                       {*c.dy(0), c.input(0), c.input(1), c.output(3), c.output(4)}, a);
  for (int i = 0; i < 3; ++i) c.set_dx(i, g[size_t(i)]);
}

// y = batch_norm_add_relu_train(x, residual, scale, bias, ...) = max(0, bn(x) + residual): the
// ReLU's mask is y > 0 (read from y: the residual moves where it cuts), and the masked dy is
// both the residual's gradient and what batch_norm_grad's arithmetic takes for dx, dscale and
// dbias; batch_norm_add_relu_grad does both in one op. State as batch_norm_train's.
void batch_norm_add_relu_train_rule(GradContext& c) {
  if (!c.dy(0)) return;
  std::vector<ValueRef> g = c.emit_all(
      "batch_norm_add_relu_grad", "grad",
      {*c.dy(0), c.output(0), c.input(0), c.input(2), c.output(3), c.output(4)},
      {{"epsilon", c.attr("epsilon")}, {"data_format", c.attr("data_format")}});
  c.set_dx(0, g[0]);
  c.set_dx(1, g[3]);
  c.set_dx(2, g[1]);
  c.set_dx(3, g[2]);
}

// y = layer_norm(x, gamma, beta): each row's mean and rstd depend on x, so dx goes through
// them; layer_norm_grad computes dx, dgamma and dbeta from the statistics the forward saved
// (outputs 1 and 2). Gradients reaching mean and rstd are not propagated (PyTorch's
// native_layer_norm_backward takes only dy as well).
void layer_norm_rule(GradContext& c) {
  if (!c.dy(0)) return;
  std::vector<ValueRef> g =
      c.emit_all("layer_norm_grad", "grad",
                 {*c.dy(0), c.input(0), c.input(1), c.output(1), c.output(2)},
                 {{"epsilon", c.attr("epsilon")}, {"axis", c.attr("axis")}});
  for (int i = 0; i < 3; ++i) c.set_dx(i, g[size_t(i)]);
}

// y = scale*(x - mean)/std + bias with frozen statistics, std = sqrt(var + epsilon) (C):
//   dx = dy * scale/std,  dscale = sum(dy * (x - mean)) / std,  dbias = sum(dy),
// sums over every axis but the channel (bias_add_grad). Per-channel vectors broadcast against
// x as (C) (NHWC and (N,C): C is the last dim) or (C,1,1) (NCHW images). mean and var are
// not differentiable (frozen: Keras' moving statistics, ONNX's inference inputs). With
// activation relu, dy first passes the ReLU's mask (relu_grad on y, > 0 where the affine map
// is).
void batch_norm_rule(GradContext& c) {
  ValueRef dy = activation_input_grad(c, *c.dy(0), c.output(0));
  const ops::Dims& x = c.in_dims(0);
  const std::string& format = c.attr("data_format").as_string();
  const int64_t channels = c.in_dims(1)[0];
  const ops::Dims along_c =
      x.size() == 4 && format == "NCHW" ? ops::Dims{channels, 1, 1} : ops::Dims{channels};
  const ops::AttrMap df = {{"data_format", format}};
  ValueRef eps = c.fill({c.in_type(4).dtype, {}}, c.attr("epsilon").as_float(), "epsilon");
  ValueRef std = c.emit("sqrt", "std", {c.emit("add", "var_eps", {c.input(4), eps})});
  if (c.needs(0)) {
    ValueRef k = c.reshape_to(c.emit("div", "scale_over_std", {c.input(1), std}), along_c, "k");
    c.set_dx(0, c.emit("mul", "dx", {dy, k}));
  }
  if (c.needs(1)) {
    ValueRef centred =
        c.emit("sub", "centred", {c.input(0), c.reshape_to(c.input(3), along_c, "mean_along_c")});
    ValueRef sum =
        c.emit("bias_add_grad", "dy_centred_sum", {c.emit("mul", "dy_centred", {dy, centred})}, df);
    c.set_dx(1, c.emit("div", "dscale", {sum, std}));
  }
  if (c.needs(2)) c.set_dx(2, c.emit("bias_add_grad", "dbias", {dy}, df));
}

// y = conv2d_transpose(x, w) is conv2d_backward_data(dy = x, w) of the convolution A that maps
// y's space to x's (strides, dilations, the instance's resolved "pads"), i.e. y = A^T x. So
// with dy at y: dx = A dy = conv2d(dy, w), w read as that convolution's HWIO filter
// (KH,KW,Co,Ci) -> channels Ci; dw = conv2d_backward_filter(dy, x) with filter_shape = w's,
// since the convolution's input is y's space (dy) and its output x's (x). Both get the pads
// spelled out with padding EXPLICIT: conv2d's own SAME rule on y's size need not give them
// (an even kernel with output_padding 0, say).
void conv2d_transpose_rule(GradContext& c) {
  ValueRef dy = *c.dy(0);
  const ops::AttrMap a = {{"strides", c.attr("strides")},
                          {"dilations", c.attr("dilations")},
                          {"data_format", c.attr("data_format")},
                          {"padding", std::string("EXPLICIT")},
                          {"pads", c.attr("pads")}};
  if (c.needs(0)) c.set_dx(0, c.emit("conv2d", "dx", {dy, c.input(1)}, a));
  if (c.needs(1)) {
    ops::AttrMap f = a;
    f["filter_shape"] = ints_of(c.in_dims(1));
    c.set_dx(1, c.emit("conv2d_backward_filter", "dw", {dy, c.input(0)}, f));
  }
}

// y = resize(x; size, mode, ...): y is linear in x, so dx = resize_grad(dy), the transpose
// of the interpolation (each weight's share of dy added back to its input cell).
void resize_rule(GradContext& c) {
  ops::AttrMap a = c.attrs_without({"size"});
  a["input_shape"] = ints_of(c.in_dims(0));
  c.set_dx(0, c.emit("resize_grad", "dx", {*c.dy(0)}, a));
}

// y = grid_sample(x, grid; mode, padding_mode, align_corners): one grid_sample_grad gives
// both gradients (they share the taps): dx, the taps' weights transposed onto dy (y is linear
// in x), and dgrid, dy times the weights' slopes along each coordinate (0 for nearest, whose
// output is piecewise constant in grid). A path that needs only one of them leaves the other
// output unused.
void grid_sample_rule(GradContext& c) {
  if (!c.dy(0)) return;
  std::vector<ValueRef> g =
      c.emit_all("grid_sample_grad", "grad", {*c.dy(0), c.input(0), c.input(1)}, c.attrs());
  c.set_dx(0, g[0]);
  c.set_dx(1, g[1]);
}

// y = gather(params, indices): each y row is a copy of the params row its id names, so
// dparams[r] = the sum of the dy rows whose id is r: scatter_add(indices, dy, num_rows = R),
// deterministic on every device. indices get no gradient (integers).
void gather_rule(GradContext& c) {
  c.set_dx(0, c.emit("scatter_add", "dparams", {c.input(1), *c.dy(0)},
                     {{"num_rows", c.in_dims(0).at(0)}}));
}

// out = scatter_add(indices, updates): linear in updates, each updates row added to one out
// row, so dupdates = gather(dout, indices).
void scatter_add_rule(GradContext& c) {
  c.set_dx(1, c.emit("gather", "dupdates", {*c.dy(0), c.input(0)}, {}));
}

// y = cumsum(x, axis, exclusive, reverse): y_j = sum of x_i over i <= j (i < j exclusive),
// so dx_i = sum of dy_j over j >= i (j > i exclusive): the same cumsum of dy with reverse
// flipped and exclusive kept (and the other way round for reverse = true).
void cumsum_rule(GradContext& c) {
  c.set_dx(0, c.emit("cumsum", "dx", {*c.dy(0)},
                     {{"axis", c.attr("axis")},
                      {"exclusive", c.attr("exclusive")},
                      {"reverse", !c.attr("reverse").as_bool()}}));
}

// (values, indices) = top_k(x, k): values[.., j] = x[.., indices[.., j]], so dx (.., N) is dy
// (.., k) scattered to the indices positions; the indices of a row are distinct, so the
// scatter is the sum over j of one_hot(indices, N)[.., j, :] * dy[.., j]:
//   reduce_sum(mul(one_hot(indices, N), reshape(dy, (.., k, 1))), axis -2).
// Existing ops (one_hot, mul with broadcasting, reduce_sum) instead of a scatter op along the
// last axis: no new kernels on three devices, and every one of them is already deterministic.
// The cost is a (.., k, N) temporary: fine for the k of sampling / beam search (k * N floats
// per row); a dedicated scatter would be the fix if a model needed k near N on a long axis.
// indices (an output) carry no gradient.
void top_k_rule(GradContext& c) {
  if (!c.dy(0)) return;
  const ops::Dims& x = c.in_dims(0);
  const int64_t n = x.back();
  ops::Dims dy3 = c.type_of(*c.dy(0)).dims;
  dy3.push_back(1);
  const int rank = static_cast<int>(dy3.size());  // x's rank + 1
  ValueRef onehot = c.emit("one_hot", "onehot", {c.output(1)},
                           {{"depth", n}, {"dtype", c.in_type(0).dtype}});
  ValueRef dy = c.reshape_to(*c.dy(0), dy3, "dy");
  ValueRef spread = c.emit("mul", "spread", {onehot, dy});
  c.set_dx(0, c.emit("reduce_sum", "dx", {spread},
                     {{"axes", ops::Ints{int64_t{rank - 2}}}, {"keepdims", false}}));
}

// y = causal_mask(x): the kept entries pass dy through, the filled ones are constants, so
// dx = causal_mask(dy) with fill 0.
void causal_mask_rule(GradContext& c) {
  if (!c.dy(0)) return;
  c.set_dx(0, c.emit("causal_mask", "dx", {*c.dy(0)}, {{"fill", 0.0}}));
}

// o, lse = attention(q, k, v): attention_grad recomputes the probabilities from the saved
// lse (output 1) and takes dq, dk, dv from do and the saved o (FlashAttention-2's backward).
// A gradient reaching lse itself is not propagated (lse is the backward's saved statistic,
// as layer_norm's mean/rstd; PyTorch's flash backward takes only dO as well).
void attention_rule(GradContext& c) {
  if (!c.dy(0)) return;
  std::vector<ValueRef> g = c.emit_all(
      "attention_grad", "grad",
      {*c.dy(0), c.input(0), c.input(1), c.input(2), c.output(0), c.output(1)},
      {{"scale", c.attr("scale")}, {"causal", c.attr("causal")}});
  for (int i = 0; i < 3; ++i) c.set_dx(i, g[size_t(i)]);
}

// (h', c', act) = lstm_cell(zx, h, c, U), z = zx + h U: lstm_cell_grad turns dh' and dc'
// into dz (at the gates' pre-activations) and dc (through c' = f*c + i*g) from the saved
// c' and gate activations; then dzx = dz, dh = dz U^T, dU = h^T dz. A step whose h' or c' is
// not used downstream (the last step's c', the unread h' of all but the last step without
// return_sequences) has no gradient there: it counts as zeros. Gradients reaching act are
// not propagated (it is saved for the backward only, as layer_norm's statistics).
void lstm_cell_rule(GradContext& c) {
  if (!c.dy(0) && !c.dy(1)) return;
  std::vector<ValueRef> g =
      c.emit_all("lstm_cell_grad", "grad",
                 {c.dy_or_zeros(0), c.dy_or_zeros(1), c.input(2), c.output(1), c.output(2)});
  const ValueRef dz = g[0];
  c.set_dx(0, dz);
  if (c.needs(1))
    c.set_dx(1, c.emit("matmul", "dh", {dz, c.input(3)}, {{"transpose_b", true}}));
  c.set_dx(2, g[1]);
  if (c.needs(3))
    c.set_dx(3, c.emit("matmul", "dU", {c.input(1), dz}, {{"transpose_a", true}}));
}

}  // namespace

void add_nn_rules(RuleTable& t) {
  t["causal_mask"] = causal_mask_rule;
  t["attention"] = attention_rule;
  t["conv2d"] = conv2d_rule;
  t["conv2d_bias_act"] = conv2d_bias_act_rule;
  t["max_pool2d"] = max_pool2d_rule;
  t["avg_pool2d"] = avg_pool2d_rule;
  t["conv2d_transpose"] = conv2d_transpose_rule;
  t["matmul"] = matmul_rule;
  t["batch_matmul"] = batch_matmul_rule;
  t["matmul_bias_act"] = matmul_bias_act_rule;
  t["bias_add"] = bias_add_rule;
  t["relu"] = relu_rule;
  t["leaky_relu"] = leaky_relu_rule;
  for (const char* op : {"elu", "gelu", "silu", "hard_swish", "softplus", "mish", "clip", "abs"})
    t[op] = x_grad_op_rule;
  t["sigmoid"] = sigmoid_rule;
  t["tanh"] = tanh_rule;
  t["softmax"] = softmax_rule;
  t["log_softmax"] = log_softmax_rule;
  t["sparse_softmax_cross_entropy"] = sparse_xent_rule;
  t["dropout"] = dropout_rule;
  t["batch_norm"] = batch_norm_rule;
  t["batch_norm_train"] = batch_norm_train_rule;
  t["batch_norm_add_relu_train"] = batch_norm_add_relu_train_rule;
  t["resize"] = resize_rule;
  t["grid_sample"] = grid_sample_rule;
  t["gather"] = gather_rule;
  t["scatter_add"] = scatter_add_rule;
  t["cumsum"] = cumsum_rule;
  t["top_k"] = top_k_rule;
  t["layer_norm"] = layer_norm_rule;
  t["lstm_cell"] = lstm_cell_rule;
}

}  // namespace dlrt::core::autodiff
