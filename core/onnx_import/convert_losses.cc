// convert_losses.cc: ONNX's NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss as
// decompositions into dlrt ops (docs/onnx.md lists them).
//
// ONNX: input x (N,C,D1..Dk) (log-probabilities for NLL, scores for SCE), target t (N,D1..Dk)
// of class ids, optional weight w (C). Per position p = (n, d...):
//   loss[p] = -x[n, t[p], d...] * w[t[p]]      (w = 1 without weights)
//   and 0 where t[p] == ignore_index.
// reduction "none" gives loss, "sum" its sum, "mean" sum(loss) / sum(w[t[p]]) over the
// positions not ignored (without weights and ignore_index: the plain mean).
//
// dlrt has no gather along an inner axis, so the pick x[n, t[p], d...] is a masked sum over C:
//   hot = one_hot(t, C) (N,D...,C), moved to (N,C,D...); an id outside [0,C) gives an all-off
//   row (one_hot's rule), so an ignore_index outside [0,C) needs nothing more, and one inside
//   is cleared from every row by a constant (C) mask;
//   picked = reduce_sum(where(hot, x, 0), axis 1), w[t] = reduce_sum(where(hot, w, 0), axis 1).
// `where` (not a multiply by the one-hot) keeps an inf or NaN in a class not picked out of the
// sum, as ONNX's element pick does. Every sum adds one value to zeros, so it is exact.
#include <fmt/format.h>

#include <optional>

#include "onnx_import/node_context.hpp"

namespace dlrt::onnx_import {
namespace {

std::vector<int64_t> all_axes(int64_t r) {
  std::vector<int64_t> a;
  for (int64_t k = 0; k < r; ++k) a.push_back(k);
  return a;
}

// The loss of log-probabilities `x` (N,C,D...) for target input `ti` and weight input `wi`
// (absent when the node has none), reduced as the node's `reduction` says.
dlrt::Value nll(NodeContext& c, dlrt::Value x, size_t ti, size_t wi) {
  const std::vector<int64_t> xd = x.dims();
  const int64_t r = static_cast<int64_t>(xd.size());
  if (r < 2) c.invalid(fmt::format("input has dims {}; ONNX wants (N,C,...)", dims_text(xd)));
  const int64_t C = xd[1];
  std::vector<int64_t> td = {xd[0]};
  td.insert(td.end(), xd.begin() + 2, xd.end());
  if (c.dims(ti) != td)
    c.invalid(fmt::format("target has dims {}; input {} wants {}", dims_text(c.dims(ti)),
                          dims_text(xd), dims_text(td)));
  const dlrt_dtype t = c.dtype(ti);
  if (t != DLRT_I32 && t != DLRT_I64)
    c.invalid(fmt::format("target is {}; ONNX wants int32 or int64", dlrt_dtype_name(t)));
  const std::string reduction = c.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    c.invalid(fmt::format("reduction '{}' (ONNX has none, sum and mean)", reduction));
  const bool has_ii = c.has_attr("ignore_index");
  const int64_t ii = c.attr_int("ignore_index", 0);
  const dlrt_dtype dt = x.dtype();

  dlrt::Value hot = c.op("one_hot", {c.value(ti)}, {{"depth", C}, {"dtype", DLRT_F32}});
  if (has_ii && ii >= 0 && ii < C) {  // clear the ignored class from every row
    std::vector<float> keep(static_cast<size_t>(C), 1.0f);
    keep[static_cast<size_t>(ii)] = 0.0f;
    hot = c.op("mul", {hot, c.constant(HostTensor::from_floats(keep, {C}))});
  }
  if (r > 2) {  // (N,D...,C) -> (N,C,D...)
    std::vector<int64_t> perm = {0, r - 1};
    for (int64_t k = 1; k < r - 1; ++k) perm.push_back(k);
    hot = c.op("transpose", {hot}, {{"perm", perm}});
  }
  dlrt::Value on = c.op("greater", {hot, c.scalar(DLRT_F32, 0.5)});
  dlrt::Value zero = c.scalar(dt, 0.0);
  const dlrt::OpAttrs over_c = {{"axes", std::vector<int64_t>{1}}, {"keepdims", false}};
  dlrt::Value loss = c.op("neg", {c.op("reduce_sum", {c.op("where", {on, x, zero})}, over_c)});

  std::optional<dlrt::Value> wt;  // w[t[p]] per position, 0 where ignored
  if (c.has_input(wi)) {
    if (c.dims(wi) != std::vector<int64_t>{C})
      c.invalid(fmt::format("weight has dims {}; ONNX wants ({})", dims_text(c.dims(wi)), C));
    std::vector<int64_t> wshape(static_cast<size_t>(r), 1);
    wshape[1] = C;
    dlrt::Value w = c.reshape(c.value(wi), wshape);
    wt = c.op("reduce_sum", {c.op("where", {on, w, zero})}, over_c);
    loss = c.op("mul", {loss, *wt});
  }
  if (reduction == "none") return loss;
  const int64_t lr = r - 1;
  dlrt::Value sum = c.op("reduce_sum", {loss}, {{"axes", all_axes(lr)}, {"keepdims", false}});
  if (reduction == "sum") return sum;
  // mean: over the weights of the positions counted (a position's count is its one-hot row's
  // sum: 1, or 0 when ignored).
  dlrt::Value den;
  if (wt) {
    den = c.op("reduce_sum", {*wt}, {{"axes", all_axes(lr)}, {"keepdims", false}});
  } else if (has_ii) {
    den = c.op("reduce_sum", {hot}, {{"axes", all_axes(r)}, {"keepdims", false}});
    if (dt != DLRT_F32) den = c.op("cast", {den}, {{"dtype", dt}});
  } else {
    int64_t n = 1;
    for (int64_t d : td) n *= d;
    den = c.scalar(dt, static_cast<double>(n));
  }
  return c.op("div", {sum, den});
}

}  // namespace

void add_loss_converters(ConverterTable& t) {
  t.add("NegativeLogLikelihoodLoss",
        "one_hot + where + reduce_sum (the pick of x[n, t, ...]), weights the same way",
        [](NodeContext& c) { c.set(0, nll(c, c.value(0), 1, 2)); });
  t.add("SoftmaxCrossEntropyLoss", "log_softmax on axis 1 + NegativeLogLikelihoodLoss's form",
        [](NodeContext& c) {
          dlrt::Value lp = c.op("log_softmax", {c.value(0)}, {{"axis", int64_t{1}}});
          c.set(0, nll(c, lp, 1, 2));
          c.set(1, lp);  // log_prob, when the node names it
        });
}

}  // namespace dlrt::onnx_import
