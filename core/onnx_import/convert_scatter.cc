// convert_scatter.cc: ONNX's index-addressed writes and reads beyond Gather/GatherElements,
// on dlrt's gather (rows of the data, flattened to the addressed part) and scatter_add:
//
//   GatherND(data, indices[..., k], batch_dims b)
//       rows of data reshaped to (prod(dims[0:b+k]), dims[b+k:]...) at the offset each index
//       tuple names (plus its batch's offset), gathered.
//   ScatterND(data, indices[..., k], updates), ScatterElements / Scatter(data, indices,
//   updates, axis): the offsets of the written rows (elements) the same way, then
//       reduction "add":  data + scatter_add(offsets, updates)
//       reduction "none": where(written, scatter_add(offsets, updates), data), written the
//                         cells some offset hits (ONNX leaves duplicate offsets undefined
//                         there; dlrt's sum then adds them).
//   "mul", "max", "min" have no dlrt op: UNIMPLEMENTED. scatter_add takes f32 updates, so the
//   scatters run on f32 data (other dtypes: UNIMPLEMENTED naming it).
// Negative indices count from the end of their axis.
#include <fmt/format.h>

#include "onnx_import/node_context.hpp"

namespace dlrt::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

int64_t product(const Ints& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t k = from; k < to && k < d.size(); ++k) p *= d[k];
  return p;
}

// indices (B..., I..., k) over data dims d, batch_dims b -> the row offsets (B..., I...) i64 into
// data reshaped to (prod(d[0:b+k]), d[b+k:]...).
dlrt::Value nd_offsets(NodeContext& c, const Ints& d, size_t indices, int64_t b) {
  const Ints& id = c.dims(indices);
  if (id.empty()) c.invalid("indices must have rank >= 1");
  const int64_t k = id.back();
  const int64_t r = static_cast<int64_t>(d.size());
  if (k < 1 || b + k > r)
    c.invalid(
        fmt::format("index tuples of {} with batch_dims {} address data of rank {}", k, b, r));
  for (int64_t j = 0; j < b; ++j)
    if (id[size_t(j)] != d[size_t(j)])
      c.invalid(fmt::format("batch dim {} is {} in indices and {} in data", j, id[size_t(j)],
                            d[size_t(j)]));
  Ints out_dims(id.begin(), id.end() - 1);
  dlrt::Value idx = c.value(indices);
  if (c.dtype(indices) != DLRT_I64) idx = c.op("cast", {idx}, {{"dtype", DLRT_I64}});
  // Sum over the tuple of (index, negative ones wrapped) * stride, one slice per component.
  dlrt::Value flat;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t axis_len = d[size_t(b + j)];
    const int64_t stride = product(d, size_t(b + j + 1), size_t(b + k));
    const int64_t last = static_cast<int64_t>(id.size()) - 1;
    dlrt::Value v =
        c.op("slice", {idx}, {{"begin", Ints{j}}, {"end", Ints{j + 1}}, {"axes", Ints{last}}});
    v = c.reshape(v, out_dims);
    v = c.op("where", {c.op("less", {v, c.scalar(DLRT_I64, 0.0)}),
                       c.op("add", {v, c.scalar(DLRT_I64, double(axis_len))}), v});
    if (stride != 1) v = c.op("mul", {v, c.scalar(DLRT_I64, double(stride))});
    flat = j == 0 ? v : c.op("add", {flat, v});
  }
  if (b > 0) {  // each batch's block of prod(d[b:b+k]) rows
    const int64_t per_batch = product(d, size_t(b), size_t(b + k));
    Ints bdims(out_dims.size(), 1);
    int64_t nb = 1;
    for (int64_t j = 0; j < b; ++j) bdims[size_t(j)] = d[size_t(j)], nb *= d[size_t(j)];
    Ints base(static_cast<size_t>(nb));
    for (int64_t j = 0; j < nb; ++j) base[size_t(j)] = j * per_batch;
    flat = c.op("add", {flat, c.constant(HostTensor::from_int64s(base, bdims))});
  }
  return flat;
}

void convert_gather_nd(NodeContext& c) {
  const Ints d = c.dims(0);
  const int64_t b = c.attr_int("batch_dims", 0);
  const int64_t k = c.dims(1).empty() ? 0 : c.dims(1).back();
  dlrt::Value offsets = nd_offsets(c, d, 1, b);
  Ints rows = {product(d, 0, size_t(b + k))};
  rows.insert(rows.end(), d.begin() + b + k, d.end());
  c.set(0, c.op("gather", {c.reshape(c.value(0), rows), offsets}));
}

// data (rows, rest...) updated at `offsets` with `updates` (offsets' dims + rest).
dlrt::Value scatter(NodeContext& c, dlrt::Value data, dlrt::Value offsets, dlrt::Value updates,
                    const std::string& reduction) {
  if (reduction != "none" && reduction != "add")
    c.unsupported(fmt::format("reduction '{}' (dlrt scatters with none and add)", reduction));
  if (data.dtype() != DLRT_F32)
    c.unsupported(fmt::format("a scatter into {} data (dlrt's scatter_add sums f32)",
                              dlrt_dtype_name(data.dtype())));
  const int64_t rows = data.dims()[0];
  dlrt::Value sum = c.op("scatter_add", {offsets, updates}, {{"num_rows", rows}});
  if (reduction == "add") return c.op("add", {data, sum});
  Ints ud = updates.dims();
  int64_t n = 1;
  for (int64_t e : ud) n *= e;
  dlrt::Value ones =
      c.constant(HostTensor::from_doubles(DLRT_F32, std::vector<double>(size_t(n), 1.0), ud));
  dlrt::Value hits = c.op("scatter_add", {offsets, ones}, {{"num_rows", rows}});
  return c.op("where", {c.op("greater", {hits, c.scalar(DLRT_F32, 0.0)}), sum, data});
}

void convert_scatter_nd(NodeContext& c) {
  const Ints d = c.dims(0);
  const int64_t k = c.dims(1).empty() ? 0 : c.dims(1).back();
  dlrt::Value offsets = nd_offsets(c, d, 1, 0);
  Ints rows = {product(d, 0, size_t(k))};
  rows.insert(rows.end(), d.begin() + k, d.end());
  dlrt::Value y = scatter(c, c.reshape(c.value(0), rows), offsets, c.value(2),
                          c.attr_string("reduction", "none"));
  c.set(0, c.reshape(y, d));
}

void convert_scatter_elements(NodeContext& c) {
  const Ints d = c.dims(0);
  if (c.dims(1) != c.dims(2)) c.invalid("indices and updates must have the same dims");
  const int64_t a = c.axis(c.attr_int("axis", 0), static_cast<int64_t>(d.size()));
  dlrt::Value offsets = element_offsets(c, 1, a);
  dlrt::Value y = scatter(c, c.reshape(c.value(0), {product(d, 0, d.size())}), offsets, c.value(2),
                          c.attr_string("reduction", "none"));
  c.set(0, c.reshape(y, d));
}

}  // namespace

void add_scatter_converters(ConverterTable& t) {
  t.add("GatherND", "gather of the data's rows at computed offsets", convert_gather_nd);
  t.add("ScatterND", "scatter_add at computed offsets (+ add, or where for none)",
        convert_scatter_nd);
  t.add("ScatterElements", "scatter_add at computed offsets (+ add, or where for none)",
        convert_scatter_elements);
  t.add("Scatter", "as ScatterElements", convert_scatter_elements);
}

}  // namespace dlrt::onnx_import
