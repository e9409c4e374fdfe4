// convert_shape.cc: ONNX's shape and data-movement ops -> dlrt's. Shapes are static in an
// imported graph (one graph per input shape), so Shape is a host constant and the ops reading
// shapes (Reshape, Expand, Slice, Pad, ConstantOfShape, ...) take them folded; constant
// operands are moved on the host (host_fold.hpp) and never reach a device.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "onnx_import/host_fold.hpp"
#include "onnx_import/node_context.hpp"
#include "onnx_import/tensor_proto.hpp"

namespace dlrt::onnx_import {
namespace {

int64_t product(const std::vector<int64_t>& d, size_t from = 0, size_t to = SIZE_MAX) {
  const auto end = d.begin() + static_cast<std::ptrdiff_t>(std::min(to, d.size()));
  int64_t n = 1;
  for (auto it = d.begin() + static_cast<std::ptrdiff_t>(std::min(from, d.size())); it < end; ++it)
    n *= *it;
  return n;
}

bool small_host(NodeContext& c, size_t i) {
  const HostTensor* h = c.host(i);
  return h != nullptr && h->element_count() <= kMaxFoldElements;
}

// Output 0 := input 0 with `dims` (same elements): host stays host.
void set_reshaped(NodeContext& c, const std::vector<int64_t>& dims) {
  if (const HostTensor* h = c.host(0)) {
    HostTensor t = *h;
    t.dims = dims;
    c.set_host(0, std::move(t));
    return;
  }
  c.set(0, c.reshape(c.value(0), dims));
}

// ---- a Reshape of a transposed view ---------------------------------------------------------
//
// A Reshape of a value that is a Transpose of another (the NCHW view of a conv's NHWC output,
// importer.cc) is done on the source where it can be, so the view survives: ShuffleNet's
// channel shuffle, Reshape (N,C,H,W) -> (N,G,C/G,H,W), Transpose (0,2,1,3,4), Reshape back,
// on a conv's output, was three passes over the image (NHWC to NCHW, the 5-D transpose, NCHW
// back to NHWC for the next conv) and becomes one (a transpose of the two channel axes inside
// each pixel of the NHWC image).
//
// The reshape is cut into groups: runs of the view's axes and of the target's with equal
// products (an axis split into several, several merged into one). A group's axes must lie in
// the source consecutively and in the view's order; a split axis always does. Where a merged
// group's axes lie in consecutive source positions in another order, the source is first
// transposed into the view's order there (that one pass); otherwise the Reshape reads the view.

struct ReshapeGroup {
  std::vector<size_t> in, out;  // axes of the view and of the target
};

// The groups of reshaping `in` to `out`, or nullopt where the dims do not cut into such runs.
std::optional<std::vector<ReshapeGroup>> reshape_groups(const std::vector<int64_t>& in,
                                                        const std::vector<int64_t>& out) {
  std::vector<ReshapeGroup> groups;
  size_t i = 0, j = 0;
  while (i < in.size() || j < out.size()) {
    if (i >= in.size() || j >= out.size()) return std::nullopt;  // a trailing 1 on one side
    ReshapeGroup g;
    int64_t pi = in[i], pj = out[j];
    g.in.push_back(i++);
    g.out.push_back(j++);
    while (pi != pj) {
      if (pi < pj) {
        if (i >= in.size()) return std::nullopt;
        pi *= in[i];
        g.in.push_back(i++);
      } else {
        if (j >= out.size()) return std::nullopt;
        pj *= out[j];
        g.out.push_back(j++);
      }
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

// The Reshape of view `in` (transposed_from S with perm p: view axis i is S's axis p[i]) to
// `shape` as a reshape of S (perhaps transposed first) and a view of that; nullopt where it
// cannot be.
std::optional<Slot> reshape_of_view(NodeContext& c, const Slot& in,
                                    const std::vector<int64_t>& shape) {
  if (!in.transposed_from) return std::nullopt;
  const std::optional<std::vector<ReshapeGroup>> groups = reshape_groups(in.dims, shape);
  if (!groups) return std::nullopt;
  dlrt::Value src = *in.transposed_from;
  std::vector<int64_t> perm = in.perm;
  const size_t rank = perm.size();
  // A merged group whose source axes are not consecutive and in order: reorder them in
  // place when they occupy consecutive positions, else give up.
  std::vector<int64_t> q(rank);  // the source's transpose: position k takes axis q[k]
  for (size_t k = 0; k < rank; ++k) q[k] = static_cast<int64_t>(k);
  bool reorder = false;
  for (const ReshapeGroup& g : *groups) {
    if (g.in.size() < 2) continue;
    bool in_order = true;
    int64_t lo = perm[g.in[0]];
    for (size_t k = 1; k < g.in.size(); ++k) {
      in_order = in_order && perm[g.in[k]] == perm[g.in[k - 1]] + 1;
      lo = std::min(lo, perm[g.in[k]]);
    }
    if (in_order) continue;
    std::vector<bool> seen(g.in.size(), false);
    for (size_t a : g.in) {
      const int64_t at = perm[a] - lo;
      if (at >= static_cast<int64_t>(g.in.size()) || seen[static_cast<size_t>(at)])
        return std::nullopt;
      seen[static_cast<size_t>(at)] = true;
    }
    for (size_t k = 0; k < g.in.size(); ++k) q[static_cast<size_t>(lo) + k] = perm[g.in[k]];
    reorder = true;
  }
  if (reorder) {
    std::vector<int64_t> where(rank);  // where[s]: the position source axis s moves to
    for (size_t k = 0; k < rank; ++k) where[static_cast<size_t>(q[k])] = static_cast<int64_t>(k);
    src = c.op("transpose", {src}, {{"perm", q}});
    for (int64_t& s : perm) s = where[static_cast<size_t>(s)];
  }
  // The source's new dims: its axes in order, each group's first one replaced by the group's
  // target dims (the group's other axes follow it and are dropped); out_pos[j]: where target
  // axis j lands.
  std::vector<int64_t> view_axis_of(rank);
  for (size_t i = 0; i < rank; ++i)
    view_axis_of[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  std::vector<size_t> group_of(rank);
  for (size_t gi = 0; gi < groups->size(); ++gi)
    for (size_t a : (*groups)[gi].in) group_of[a] = gi;
  // (After the reorder each group's source axes are consecutive and in the view's order, so
  // the group's first view axis holds its first source axis.)
  std::vector<int64_t> new_dims, out_perm(shape.size());
  for (size_t s = 0; s < rank; ++s) {
    const ReshapeGroup& g = (*groups)[group_of[static_cast<size_t>(view_axis_of[s])]];
    if (static_cast<int64_t>(s) != perm[g.in[0]]) continue;  // not the group's first axis
    for (size_t j : g.out) {
      out_perm[j] = static_cast<int64_t>(new_dims.size());
      new_dims.push_back(shape[j]);
    }
  }
  const dlrt::Value reshaped = c.reshape(src, new_dims);
  bool identity = true;
  for (size_t j = 0; j < out_perm.size(); ++j)
    identity = identity && out_perm[j] == static_cast<int64_t>(j);
  Slot out;
  out.value = identity ? reshaped : c.op("transpose", {reshaped}, {{"perm", out_perm}});
  out.dtype = out.value.dtype();
  out.dims = out.value.dims();
  if (!identity) {
    out.transposed_from = reshaped;
    out.perm = out_perm;
  }
  return out;
}

void convert_reshape(NodeContext& c) {
  const std::vector<int64_t> in = c.dims(0);
  std::vector<int64_t> shape = c.require_host(1, "shape").as_int64s();
  const bool allowzero = c.attr_int("allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0 && !allowzero) {
      if (k >= in.size()) c.invalid(fmt::format("shape[{}] is 0 (copy) past the input's rank", k));
      shape[k] = in[k];
    }
    if (shape[k] == -1) {
      if (infer >= 0) c.invalid("shape has two -1 dims");
      infer = static_cast<int64_t>(k);
    } else if (shape[k] < 0) {
      c.invalid(fmt::format("shape[{}] is {}", k, shape[k]));
    } else {
      known *= shape[k];
    }
  }
  const int64_t total = product(in);
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      c.invalid(
          fmt::format("input dims {} cannot be reshaped to {}", dims_text(in), dims_text(shape)));
    shape[infer] = total / known;
  }
  if (product(shape) != total)
    c.invalid(fmt::format("input dims {} ({} elements) cannot be reshaped to {}", dims_text(in),
                          total, dims_text(shape)));
  if (c.host(0) == nullptr)
    if (std::optional<Slot> view = reshape_of_view(c, c.slot(0), shape))
      return c.set_slot(0, std::move(*view));
  set_reshaped(c, shape);
}

void convert_flatten(NodeContext& c) {
  const std::vector<int64_t> in = c.dims(0);
  const int64_t r = static_cast<int64_t>(in.size());
  int64_t a = c.attr_int("axis", 1);
  if (a < 0) a += r;
  if (a < 0 || a > r) c.invalid(fmt::format("axis {} is out of range for rank {}", a, r));
  set_reshaped(c, {product(in, 0, a), product(in, a)});
}

std::vector<int64_t> axes_input_or_attr(NodeContext& c, size_t input, int since_opset) {
  if (c.opset() >= since_opset) {
    if (!c.has_input(input)) return {};
    return c.require_host(input, "axes").as_int64s();
  }
  return c.attr_ints("axes");
}

void convert_unsqueeze(NodeContext& c) {
  const std::vector<int64_t> in = c.dims(0);
  std::vector<int64_t> axes = axes_input_or_attr(c, 1, 13);
  const int64_t r = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> is_new(r, false);
  for (int64_t a : axes) {
    const int64_t v = c.axis(a, r);
    if (is_new[v]) c.invalid(fmt::format("axis {} is given twice", a));
    is_new[v] = true;
  }
  std::vector<int64_t> out;
  size_t k = 0;
  for (int64_t i = 0; i < r; ++i) out.push_back(is_new[i] ? 1 : in[k++]);
  set_reshaped(c, out);
}

void convert_squeeze(NodeContext& c) {
  const std::vector<int64_t> in = c.dims(0);
  const int64_t r = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes = axes_input_or_attr(c, 1, 13);
  std::vector<bool> drop(r, false);
  if (axes.empty()) {
    for (int64_t i = 0; i < r; ++i) drop[i] = in[i] == 1;
  } else {
    for (int64_t a : axes) {
      const int64_t v = c.axis(a, r);
      if (in[v] != 1) c.invalid(fmt::format("axis {} has size {}, not 1", a, in[v]));
      drop[v] = true;
    }
  }
  std::vector<int64_t> out;
  for (int64_t i = 0; i < r; ++i)
    if (!drop[i]) out.push_back(in[i]);
  set_reshaped(c, out);
}

void convert_transpose(NodeContext& c) {
  const int64_t r = c.rank(0);
  std::vector<int64_t> perm = c.attr_ints("perm");
  if (perm.empty())
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != r) c.invalid("perm does not name every axis");
  if (small_host(c, 0)) {
    c.set_host(0, host_transpose(*c.host(0), perm));
    return;
  }
  // Transpose(Transpose(x, p1), p2) is Transpose(x, p1[p2[i]]): composed, and x itself when
  // that is the identity.
  dlrt::Value x = c.value(0);
  const Slot& in = c.slot(0);
  if (in.transposed_from) {
    std::vector<int64_t> composed(r);
    for (int64_t i = 0; i < r; ++i) composed[i] = in.perm[perm[i]];
    perm = composed;
    x = *in.transposed_from;
  }
  bool identity = true;
  for (int64_t i = 0; i < r; ++i) identity = identity && perm[i] == i;
  Slot s;
  s.value = identity ? (in.transposed_from ? x : c.op("copy", {x}))
                     : c.op("transpose", {x}, {{"perm", perm}});
  s.dtype = s.value.dtype();
  s.dims = s.value.dims();
  if (!identity) {
    s.transposed_from = x;
    s.perm = perm;
  }
  c.set_slot(0, std::move(s));
}

void convert_concat(NodeContext& c) {
  const int64_t r = c.rank(0);
  const int64_t a = c.axis(c.attr_int("axis", 0), r);
  bool all_host = true;
  for (size_t i = 0; i < c.num_inputs(); ++i) all_host = all_host && small_host(c, i);
  if (all_host) {
    std::vector<const HostTensor*> parts;
    for (size_t i = 0; i < c.num_inputs(); ++i) parts.push_back(c.host(i));
    c.set_host(0, host_concat(parts, a));
    return;
  }
  if (r == 4 && a == 1 && c.num_inputs() > 1) {  // channels of NCHW views: concat NHWC on C
    std::vector<dlrt::Value> srcs;
    for (size_t i = 0; i < c.num_inputs(); ++i)
      if (std::optional<dlrt::Value> s = nhwc_source(c, i)) srcs.push_back(*s);
    if (srcs.size() == c.num_inputs())
      return c.set_slot(0, nchw_view(c, c.op("concat", srcs, {{"axis", int64_t{3}}})));
  }
  std::vector<dlrt::Value> parts;
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (product(c.dims(i)) > 0) parts.push_back(c.value(i));  // ONNX allows empty parts
  c.set(0, parts.size() == 1 ? c.op("copy", parts) : c.op("concat", parts, {{"axis", a}}));
}

void convert_gather(NodeContext& c) {
  const std::vector<int64_t> d = c.dims(0);
  const int64_t r = static_cast<int64_t>(d.size());
  const int64_t a = c.axis(c.attr_int("axis", 0), r);
  const HostTensor* ih = c.host(1);
  std::vector<int64_t> idims = c.dims(1);
  dlrt::Value ids;
  if (ih == nullptr) {
    // ONNX counts negative indices from the end; dlrt's gather refuses them. The wrap is
    // integer arithmetic in the indices' own type (exact).
    dlrt::Value i = c.value(1);
    const dlrt_dtype it = c.dtype(1);
    ids = c.op("where", {c.op("less", {i, c.scalar(it, 0.0)}),
                         c.op("add", {i, c.scalar(it, double(d[a]))}), i});
    if (idims.empty()) ids = c.reshape(ids, {1});
  } else {
    std::vector<int64_t> idx = ih->as_int64s();
    for (int64_t& i : idx) {
      if (i < -d[a] || i >= d[a])
        c.invalid(fmt::format("index {} is out of range for axis {} of size {}", i, a, d[a]));
      if (i < 0) i += d[a];
    }
    idims = ih->dims;
    if (small_host(c, 0)) {
      c.set_host(0, host_gather(*c.host(0), idx, idims, a));
      return;
    }
    ids = c.constant(HostTensor::from_int64s(idx, idims.empty() ? std::vector<int64_t>{1} : idims));
  }
  const int64_t q = static_cast<int64_t>(idims.size());
  dlrt::Value x = c.value(0);
  std::vector<int64_t> to_front;  // axis a first, the others in order
  to_front.push_back(a);
  for (int64_t k = 0; k < r; ++k)
    if (k != a) to_front.push_back(k);
  if (a != 0) x = c.op("transpose", {x}, {{"perm", to_front}});
  dlrt::Value y = c.op("gather", {x, ids});  // (I..., rest...)
  if (idims.empty()) {                       // scalar index: drop the 1
    std::vector<int64_t> yd = y.dims();
    yd.erase(yd.begin());
    y = c.reshape(y, yd);
  }
  if (a != 0) {
    // (I..., d[0..a), d(a..r)) -> (d[0..a), I..., d(a..r))
    const int64_t out_rank = r - 1 + q;
    std::vector<int64_t> perm;
    for (int64_t k = 0; k < out_rank; ++k) perm.push_back(k < a ? q + k : (k < a + q ? k - a : k));
    y = c.op("transpose", {y}, {{"perm", perm}});
  }
  c.set(0, y);
}

// GatherElements: y[p] = x[p with its axis-a coordinate replaced by indices[p]]. As dlrt's
// gather along axis 0 of x flattened: flat[p] = base[p] + indices[p] * stride[a], base[p] the
// offset of p's other coordinates (a constant). Computed indices are wrapped and scaled in
// i64 (exact); constant ones on the host.
void convert_gather_elements(NodeContext& c) {
  const std::vector<int64_t> d = c.dims(0);
  const int64_t a = c.axis(c.attr_int("axis", 0), static_cast<int64_t>(d.size()));
  c.set(0, c.op("gather", {c.reshape(c.value(0), {product(d)}), element_offsets(c, 1, a)}));
}

void convert_slice(NodeContext& c) {
  const std::vector<int64_t> d = c.dims(0);
  const int64_t r = static_cast<int64_t>(d.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset() < 10) {
    starts = c.attr_ints("starts");
    ends = c.attr_ints("ends");
    axes = c.attr_ints("axes");
  } else {
    starts = c.require_host(1, "starts").as_int64s();
    ends = c.require_host(2, "ends").as_int64s();
    if (c.has_input(3)) axes = c.require_host(3, "axes").as_int64s();
    if (c.has_input(4)) steps = c.require_host(4, "steps").as_int64s();
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.invalid("starts, ends, axes and steps differ in length");
  std::vector<int64_t> s_all(r, 0), step_all(r, 1), out = d;
  std::vector<int64_t> begin, end, ax, st;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = c.axis(axes[k], r), n = d[a], step = steps[k];
    if (step == 0) c.invalid("a step is 0");
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s += n;
    if (e < 0) e += n;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
    }
    const int64_t len = step > 0 ? std::max<int64_t>(0, (e - s + step - 1) / step)
                                 : std::max<int64_t>(0, (s - e + (-step) - 1) / (-step));
    s_all[a] = s;
    step_all[a] = step;
    out[a] = len;
    if (len == 0 && c.host(0) == nullptr)
      c.unsupported("a slice with no elements (dlrt has no empty tensors)");
    if (step < 0 && e < 0) {
      // End "before index 0": as an exclusive end in range, the last index read minus one
      // step is the same slice; dlrt reads negative ends from the back, so name it exactly.
      e = s + step * len;  // may be -1 when the slice reaches index 0
    }
    begin.push_back(s);
    end.push_back(e);
    ax.push_back(a);
    st.push_back(step);
  }
  if (c.host(0) != nullptr && product(d) <= kMaxFoldElements) {
    c.set_host(0, host_slice(*c.host(0), s_all, step_all, out));
    return;
  }
  for (size_t k = 0; k < end.size(); ++k)
    if (end[k] < 0)
      c.unsupported(
          "a negative-step slice that reaches index 0 (its end cannot be spelled in dlrt's slice)");
  c.set(0, c.op("slice", {c.value(0)},
                {{"begin", begin}, {"end", end}, {"axes", ax}, {"strides", st}}));
}

void convert_split(NodeContext& c) {
  const std::vector<int64_t> d = c.dims(0);
  const int64_t r = static_cast<int64_t>(d.size());
  const int64_t a = c.axis(c.attr_int("axis", 0), r);
  std::vector<int64_t> sizes;
  if (c.opset() < 13) sizes = c.attr_ints("split");
  else if (c.has_input(1)) sizes = c.require_host(1, "split").as_int64s();
  const int64_t parts = static_cast<int64_t>(c.num_outputs());
  if (sizes.empty()) {
    const int64_t chunk = (d[a] + parts - 1) / parts;  // opset 18: the last part may be smaller
    for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::min(chunk, d[a] - k * chunk));
  }
  if (static_cast<int64_t>(sizes.size()) != parts)
    c.invalid("split does not give one size per output");
  int64_t sum = 0;
  for (int64_t s : sizes) sum += s;
  if (sum != d[a]) c.invalid(fmt::format("split sizes add up to {}, axis {} has {}", sum, a, d[a]));
  for (int64_t s : sizes)
    if (s < 1) c.unsupported("a split part of size 0 (dlrt has no zero-sized tensors)");
  if (parts == 1) {
    c.set(0, c.op("copy", {c.value(0)}));
    return;
  }
  std::vector<dlrt::Value> out =
      c.ops("split", {c.value(0)}, {{"axis", a}, {"sizes", sizes}}, parts);
  for (int64_t k = 0; k < parts; ++k) c.set(k, out[k]);
}

void convert_cast(NodeContext& c) {
  const dlrt_dtype to =
      dtype_from_onnx(static_cast<int32_t>(c.attr_int("to", 0)), c.label() + " attribute 'to'");
  refuse_rounding_to_bf16(c, c.dtype(0), to);
  if (const HostTensor* h = c.host(0); h != nullptr && h->dtype != DLRT_F16 &&
                                       h->dtype != DLRT_BF16 && to != DLRT_F16 && to != DLRT_BF16) {
    c.set_host(0, host_cast(*h, to));
    return;
  }
  c.set(0, c.dtype(0) == to ? c.op("copy", {c.value(0)})
                            : c.op("cast", {c.value(0)}, {{"dtype", to}}));
}

void convert_constant(NodeContext& c) {
  if (c.has_attr("value")) return c.set_host(0, c.attr_host_tensor("value"));
  if (c.has_attr("value_float"))
    return c.set_host(0, HostTensor::from_floats({c.attr_float("value_float", 0)}, {}));
  if (c.has_attr("value_floats")) {
    std::vector<float> v = c.attr_floats("value_floats");
    return c.set_host(0, HostTensor::from_floats(v, {static_cast<int64_t>(v.size())}));
  }
  if (c.has_attr("value_int"))
    return c.set_host(0, HostTensor::from_int64s({c.attr_int("value_int", 0)}, {}));
  if (c.has_attr("value_ints")) {
    std::vector<int64_t> v = c.attr_ints("value_ints");
    return c.set_host(0, HostTensor::from_int64s(v, {static_cast<int64_t>(v.size())}));
  }
  c.unsupported(
      "a Constant without value, value_float(s) or value_int(s) (strings and sparse values are not "
      "supported)");
}

void convert_constant_of_shape(NodeContext& c) {
  const std::vector<int64_t> shape = c.require_host(0, "shape").as_int64s();
  const int64_t n = checked_element_count(shape, kMaxHostElements, c.label() + " shape");
  HostTensor v =
      c.has_attr("value") ? c.attr_host_tensor("value") : HostTensor::from_floats({0.f}, {1});
  if (v.element_count() != 1) c.invalid("value must hold one element");
  HostTensor t;
  t.dtype = v.dtype;
  t.dims = shape;
  const size_t es = dlrt_dtype_size(v.dtype);
  t.bytes.resize(static_cast<size_t>(n) * es);
  for (int64_t i = 0; i < n; ++i)
    std::copy(v.bytes.begin(), v.bytes.end(), t.bytes.begin() + i * es);
  c.set_host(0, std::move(t));
}

void convert_expand(NodeContext& c) {
  const std::vector<int64_t> shape = c.require_host(1, "shape").as_int64s();
  std::vector<int64_t> out;
  if (!broadcast_dims(c.dims(0), shape, out))
    c.invalid(fmt::format("input dims {} do not broadcast to {}", dims_text(c.dims(0)),
                          dims_text(shape)));
  checked_element_count(out, kMaxTensorElements, c.label());
  if (small_host(c, 0) && product(out) <= kMaxFoldElements) {
    HostTensor zeros = HostTensor::from_doubles(c.dtype(0) == DLRT_BOOL ? DLRT_U8 : DLRT_F64,
                                                std::vector<double>(product(out), 0.0), out);
    c.set_host(0, host_binary(*c.host(0), zeros, c.dtype(0), [](double a, double) { return a; }));
    return;
  }
  if (out == c.dims(0)) return c.set(0, c.op("copy", {c.value(0)}));
  c.set(0, c.op("broadcast_to", {c.value(0)}, {{"shape", out}}));
}

// Pad as slices and concats, one axis at a time, for what dlrt's pad op does not do: the
// modes edge (repeat the border element) and wrap (the other end's elements), dtypes other
// than floats, and negative pads (which crop). Per axis of length n with pads (lo, hi):
//   constant  a filled constant of lo (hi) elements     edge  x[0] (x[n-1]) broadcast
//   reflect   x[lo..1] (x[n-2..n-1-hi]) reversed        wrap  x[n-lo..n) (x[0..hi))
dlrt::Value pad_by_concat(NodeContext& c, dlrt::Value x, const std::vector<int64_t>& pads,
                          const std::string& mode, double value) {
  const int64_t r = static_cast<int64_t>(x.dims().size());
  auto cut = [&](dlrt::Value v, int64_t a, int64_t b, int64_t e, int64_t step = 1) {
    return c.op("slice", {v},
                {{"begin", std::vector<int64_t>{b}},
                 {"end", std::vector<int64_t>{e}},
                 {"axes", std::vector<int64_t>{a}},
                 {"strides", std::vector<int64_t>{step}}});
  };
  for (int64_t a = 0; a < r; ++a) {
    int64_t lo = pads[static_cast<size_t>(a)], hi = pads[static_cast<size_t>(a + r)];
    const int64_t len = x.dims()[static_cast<size_t>(a)];
    if (lo < 0 || hi < 0) {  // crop first
      const int64_t b = std::max<int64_t>(-lo, 0), e = len - std::max<int64_t>(-hi, 0);
      if (e <= b)
        c.unsupported("pads that crop an axis to nothing (dlrt has no zero-sized tensors)");
      x = cut(x, a, b, e);
      lo = std::max<int64_t>(lo, 0), hi = std::max<int64_t>(hi, 0);
    }
    if (lo == 0 && hi == 0) continue;
    const int64_t n = x.dims()[static_cast<size_t>(a)];
    if ((mode == "wrap" && (lo > n || hi > n)) || (mode == "reflect" && (lo >= n || hi >= n)))
      c.unsupported(fmt::format("{} pads of {} and {} on an axis of {}", mode, lo, hi, n));
    auto side = [&](int64_t p, bool before) {
      std::vector<int64_t> dims = x.dims();
      dims[static_cast<size_t>(a)] = p;
      if (mode == "constant") {
        int64_t count = 1;
        for (int64_t e : dims) count *= e;
        return c.constant(HostTensor::from_doubles(
            x.dtype(), std::vector<double>(static_cast<size_t>(count), value), dims));
      }
      if (mode == "edge")
        return c.op("broadcast_to", {before ? cut(x, a, 0, 1) : cut(x, a, n - 1, n)},
                    {{"shape", dims}});
      if (mode == "wrap") return before ? cut(x, a, n - p, n) : cut(x, a, 0, p);
      // reflect; an end below 0 is spelled as INT64_MIN (the slice runs through index 0)
      if (before) return cut(x, a, p, 0, -1);
      const int64_t end = n - 2 - p;
      return cut(x, a, n - 2, end < 0 ? std::numeric_limits<int64_t>::min() : end, -1);
    };
    std::vector<dlrt::Value> parts;
    if (lo > 0) parts.push_back(side(lo, true));
    parts.push_back(x);
    if (hi > 0) parts.push_back(side(hi, false));
    x = c.op("concat", parts, {{"axis", a}});
  }
  return x;
}

void convert_pad(NodeContext& c) {
  const int64_t r = c.rank(0);
  std::string mode = c.attr_string("mode", "constant");
  std::vector<int64_t> pads;
  double value = 0;
  std::vector<int64_t> axes;
  if (c.opset() < 11) {
    pads = c.attr_ints("pads");
    value = c.attr_float("value", 0.f);
  } else {
    pads = c.require_host(1, "pads").as_int64s();
    if (c.has_input(2)) value = c.require_host(2, "constant_value").as_doubles().at(0);
    if (c.has_input(3)) axes = c.require_host(3, "axes").as_int64s();
  }
  if (!axes.empty()) {  // pads name only `axes`: spread them over every dim
    if (pads.size() != 2 * axes.size()) c.invalid("pads needs 2 values per axis");
    std::vector<int64_t> full(2 * r, 0);
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t a = c.axis(axes[k], r);
      full[a] = pads[k];
      full[r + a] = pads[axes.size() + k];
    }
    pads = full;
  }
  if (static_cast<int64_t>(pads.size()) != 2 * r)
    c.invalid(fmt::format("pads has {} values; rank {} needs {}", pads.size(), r, 2 * r));
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    c.invalid(fmt::format("pad mode '{}' (ONNX has constant, reflect, edge and wrap)", mode));
  bool zero = true, negative = false;
  for (int64_t p : pads) {
    negative = negative || p < 0;
    zero = zero && p == 0;
  }
  if (zero) return c.set(0, c.op("copy", {c.value(0)}));
  const dlrt_dtype d = c.dtype(0);
  const bool float_x = d == DLRT_F32 || d == DLRT_F16 || d == DLRT_BF16;
  if (float_x && !negative && (mode == "constant" || mode == "reflect"))
    return c.set(0, c.op("pad", {c.value(0)}, {{"pads", pads}, {"mode", mode}, {"value", value}}));
  c.set(0, pad_by_concat(c, c.value(0), pads, mode, value));
}

void convert_range(NodeContext& c) {
  const HostTensor& s = c.require_host(0, "start");
  const double start = s.as_doubles().at(0), limit = c.require_host(1, "limit").as_doubles().at(0),
               delta = c.require_host(2, "delta").as_doubles().at(0);
  if (delta == 0) c.invalid("delta is 0");
  const double count = std::max(std::ceil((limit - start) / delta), 0.0);
  if (count > static_cast<double>(kMaxHostElements))
    c.invalid(fmt::format("the range has {} elements", count));
  std::vector<double> v(static_cast<size_t>(count));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + delta * static_cast<double>(i);
  c.set_host(0, HostTensor::from_doubles(s.dtype, v, {static_cast<int64_t>(v.size())}));
}

void convert_tile(NodeContext& c) {
  const std::vector<int64_t> reps = c.require_host(1, "repeats").as_int64s();
  if (static_cast<int64_t>(reps.size()) != c.rank(0)) c.invalid("repeats needs one value per dim");
  dlrt::Value x = c.value(0);
  for (size_t a = 0; a < reps.size(); ++a) {
    if (reps[a] < 1) c.unsupported("a repeat below 1 (dlrt has no empty tensors)");
    if (reps[a] == 1) continue;
    x = c.op("concat", std::vector<dlrt::Value>(reps[a], x), {{"axis", static_cast<int64_t>(a)}});
  }
  c.set(0, x.dims() == c.dims(0) ? c.op("copy", {x}) : x);
}

void convert_resize(NodeContext& c) {
  const std::vector<int64_t> d = c.dims(0);
  if (d.size() != 4)
    c.unsupported(fmt::format("Resize of rank {} (dlrt resizes (N,C,H,W))", d.size()));
  std::vector<int64_t> sizes;
  std::vector<double> scales;
  const size_t scales_at = c.opset() < 11 ? 1 : 2;
  if (c.opset() >= 11 && c.has_input(3)) sizes = c.require_host(3, "sizes").as_int64s();
  else if (c.has_input(scales_at) && c.require_host(scales_at, "scales").element_count() > 0)
    scales = c.require_host(scales_at, "scales").as_doubles();
  // `axes` (opset 18): the sizes or scales name those dims only; the others keep theirs.
  std::vector<int64_t> axes = {0, 1, 2, 3};
  if (c.has_attr("axes")) {
    axes = c.attr_ints("axes");
    for (int64_t& a : axes) a = c.axis(a, 4);
  }
  const size_t given = sizes.empty() ? scales.size() : sizes.size();
  if (given != axes.size())
    c.invalid(fmt::format("Resize has {} axes but {} {}", axes.size(), given,
                          sizes.empty() ? "scales" : "sizes"));
  std::vector<double> scale(4, 1.0);
  std::vector<int64_t> out = d;
  for (size_t k = 0; k < axes.size(); ++k) {
    const size_t a = static_cast<size_t>(axes[k]);
    if (sizes.empty()) scale[a] = scales[k];
    else out[a] = sizes[k];
  }
  if (!sizes.empty()) {
    const std::string policy = c.attr_string("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch") {
      // One scale for every listed axis: the smallest (not_larger) or largest (not_smaller)
      // out/in; the output is round(scale * in) there.
      if (policy != "not_larger" && policy != "not_smaller")
        c.invalid(fmt::format("keep_aspect_ratio_policy '{}'", policy));
      double s = policy == "not_larger" ? INFINITY : 0.0;
      for (int64_t a : axes) {
        const double r = double(out[a]) / double(d[a]);
        s = policy == "not_larger" ? std::min(s, r) : std::max(s, r);
      }
      for (int64_t a : axes) scale[a] = s;
      sizes.clear();  // now the scales form
    }
  }
  if (sizes.empty()) {
    // ONNX maps output coordinates through the scale itself, dlrt's resize through out/in:
    // the same only when in * scale is a whole number (then out = in * scale).
    for (size_t k = 0; k < 4; ++k) {
      const double o = double(d[k]) * scale[k];
      if (o != std::floor(o) || o < 1)
        c.unsupported(
            fmt::format("a scale of {} on a dim of {} (not a whole output length: ONNX "
                        "maps coordinates by the scale, dlrt's resize by the sizes)",
                        scale[k], d[k]));
      out[k] = static_cast<int64_t>(o);
    }
  }
  sizes = out;
  if (sizes[0] != d[0] || sizes[1] != d[1]) c.unsupported("Resize that changes N or C");
  if (c.attr_int("antialias", 0) != 0) c.unsupported("antialias");
  std::string mode = c.attr_string("mode", "nearest");
  if (mode == "linear") mode = "bilinear";
  if (mode != "nearest" && mode != "bilinear") c.unsupported(fmt::format("mode '{}'", mode));
  std::string ct =
      c.attr_string("coordinate_transformation_mode", c.opset() < 11 ? "asymmetric" : "half_pixel");
  if (ct == "pytorch_half_pixel") {
    if (sizes[2] == 1 || sizes[3] == 1)
      c.unsupported("pytorch_half_pixel to an output of length 1");
    ct = "half_pixel";
  }
  if (ct != "half_pixel" && ct != "align_corners" && ct != "asymmetric")
    c.unsupported(fmt::format("coordinate_transformation_mode '{}'", ct));
  std::string nm = c.attr_string("nearest_mode", c.opset() < 11 ? "floor" : "round_prefer_floor");
  if (c.opset() < 11 && mode == "nearest") nm = "floor";
  c.set(0, c.op("resize", {c.value(0)},
                {{"size", std::vector<int64_t>{sizes[2], sizes[3]}},
                 {"mode", mode},
                 {"coordinate_transformation", ct},
                 {"nearest_mode", nm},
                 {"data_format", "NCHW"}}));
}

}  // namespace

// dlrt's cast rounds f32/f64 to bf16 to nearest (ties to even), as onnxruntime does; ONNX
// 1.18's Cast cases keep the upper 16 bits (truncation), so the two disagree in the last bit
// and dlrt declines rather than give ONNX's cases other numbers.
void refuse_rounding_to_bf16(NodeContext& c, dlrt_dtype from, dlrt_dtype to) {
  if (to == DLRT_BF16 && (from == DLRT_F32 || from == DLRT_F64))
    c.unsupported(
        fmt::format("a cast from {} to bf16 (dlrt rounds to nearest even; ONNX's cases "
                    "truncate)",
                    dlrt_dtype_name(from)));
}

// The offsets into the flattened data (input 0) of every element that input `indices` (of
// data's rank) names along `axis`, as GatherElements and ScatterElements address them:
// offset = index * stride[axis] + the element's own position on the other axes. Negative
// indices count from the end. A constant index tensor gives a constant (and range-checked)
// result; a graph value gives i64 ops.
dlrt::Value element_offsets(NodeContext& c, size_t indices, int64_t a) {
  const std::vector<int64_t> d = c.dims(0), id = c.dims(indices);
  const int64_t r = static_cast<int64_t>(d.size());
  if (static_cast<int64_t>(id.size()) != r)
    c.invalid(fmt::format("indices have dims {}; data {} wants the same rank", dims_text(id),
                          dims_text(d)));
  std::vector<int64_t> stride(static_cast<size_t>(r), 1);
  for (int64_t k = r - 2; k >= 0; --k) stride[k] = stride[k + 1] * d[k + 1];
  const int64_t n = product(id);
  std::vector<int64_t> base(static_cast<size_t>(n)), coord(static_cast<size_t>(r), 0);
  for (int64_t p = 0; p < n; ++p) {
    int64_t off = 0;
    for (int64_t k = 0; k < r; ++k) {
      if (k != a && coord[k] >= d[k])
        c.invalid(fmt::format("indices have dims {}, larger than data {} off the axis",
                              dims_text(id), dims_text(d)));
      if (k != a) off += coord[k] * stride[k];
    }
    base[p] = off;
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++coord[k] < id[k]) break;
      coord[k] = 0;
    }
  }
  if (const HostTensor* ih = c.host(indices)) {
    std::vector<int64_t> idx = ih->as_int64s();
    for (int64_t p = 0; p < n; ++p) {
      int64_t i = idx[p];
      if (i < -d[a] || i >= d[a])
        c.invalid(fmt::format("index {} is out of range for axis {} of size {}", i, a, d[a]));
      if (i < 0) i += d[a];
      idx[p] = base[p] + i * stride[a];
    }
    return c.constant(HostTensor::from_int64s(idx, id));
  }
  dlrt::Value i = c.value(indices);
  if (c.dtype(indices) != DLRT_I64) i = c.op("cast", {i}, {{"dtype", DLRT_I64}});
  i = c.op("where", {c.op("less", {i, c.scalar(DLRT_I64, 0.0)}),
                     c.op("add", {i, c.scalar(DLRT_I64, double(d[a]))}), i});
  return c.op("add", {c.op("mul", {i, c.scalar(DLRT_I64, double(stride[a]))}),
                      c.constant(HostTensor::from_int64s(base, id))});
}

void add_shape_converters(ConverterTable& t) {
  t.add("Identity", "(the input itself)", [](NodeContext& c) { c.set_slot(0, c.slot(0)); });
  t.add("Dropout", "(the input itself: inference)", [](NodeContext& c) {
    // Training mode drops at random (ONNX's draws cannot be matched) unless the ratio is 0,
    // where ONNX's Dropout is the identity too.
    if (c.opset() >= 12 && c.has_input(2) &&
        c.require_host(2, "training_mode").as_int64s().at(0) != 0) {
      const double ratio = c.has_input(1) ? c.require_host(1, "ratio").as_doubles().at(0) : 0.5;
      if (ratio != 0.0) c.unsupported("Dropout with training_mode true and a ratio above 0");
    }
    c.set_slot(0, c.slot(0));
    if (c.wants_output(1))
      c.set(1, c.op("fill", {}, {{"shape", c.dims(0)}, {"value", 1.0}, {"dtype", DLRT_BOOL}}));
  });
  t.add("Constant", "(host constant)", convert_constant);
  t.add("ConstantOfShape", "(host constant)", convert_constant_of_shape);
  t.add("Shape", "(host constant: shapes are static)", [](NodeContext& c) {
    const std::vector<int64_t> d = c.dims(0);
    const int64_t r = static_cast<int64_t>(d.size());
    int64_t s = c.attr_int("start", 0), e = c.attr_int("end", r);
    if (s < 0) s += r;
    if (e < 0) e += r;
    s = std::clamp<int64_t>(s, 0, r);
    e = std::clamp<int64_t>(e, s, r);
    std::vector<int64_t> v(d.begin() + s, d.begin() + e);
    c.set_host(0, HostTensor::from_int64s(v, {static_cast<int64_t>(v.size())}));
  });
  t.add("Size", "(host constant)",
        [](NodeContext& c) { c.set_host(0, HostTensor::from_int64s({product(c.dims(0))}, {})); });
  t.add("Reshape", "reshape", convert_reshape);
  t.add("Flatten", "reshape", convert_flatten);
  t.add("Unsqueeze", "reshape", convert_unsqueeze);
  t.add("Squeeze", "reshape", convert_squeeze);
  t.add("Transpose", "transpose", convert_transpose);
  t.add("Concat", "concat", convert_concat);
  t.add("Gather", "gather (+ transpose for axis != 0)", convert_gather);
  t.add("Slice", "slice", convert_slice);
  t.add("Split", "split", convert_split);
  t.add("Cast", "cast", convert_cast);
  t.add("GatherElements", "gather of the flattened data at computed offsets",
        convert_gather_elements);
  t.add("Expand", "broadcast_to", convert_expand);
  t.add("Pad", "pad", convert_pad);
  t.add("Range", "(host constant)", convert_range);
  t.add("Tile", "concat per repeated axis", convert_tile);
  t.add("Resize", "resize NCHW (sizes form)", convert_resize);
  t.add("Upsample", "resize NCHW", convert_resize);
}

}  // namespace dlrt::onnx_import
