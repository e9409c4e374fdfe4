// host_fold.cc: host arithmetic for constant folding at import (host_fold.hpp).
#include "onnx_import/host_fold.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "status.hpp"

namespace dlrt::onnx_import {
namespace {

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

// Strides of `dims` seen through a broadcast to rank r: 0 along stretched or missing dims.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& dims, const std::vector<int64_t>& out) {
  const std::vector<int64_t> s = strides_of(dims);
  std::vector<int64_t> b(out.size(), 0);
  const size_t off = out.size() - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) b[off + i] = dims[i] == 1 ? 0 : s[i];
  return b;
}

void copy_element(const HostTensor& from, int64_t i, HostTensor& to, int64_t j) {
  const size_t es = dlrt_dtype_size(from.dtype);
  std::memcpy(to.bytes.data() + j * es, from.bytes.data() + i * es, es);
}

}  // namespace

bool broadcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                    std::vector<int64_t>& out) {
  const size_t r = std::max(a.size(), b.size());
  out.assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    out[i] = da == 1 ? db : da;
  }
  return true;
}

HostTensor host_binary(const HostTensor& a, const HostTensor& b, dlrt_dtype out_dtype,
                       const std::function<double(double, double)>& f) {
  std::vector<int64_t> dims;
  if (!broadcast_dims(a.dims, b.dims, dims))
    fail(DLRT_INVALID_ARGUMENT,
         "dims " + dims_text(a.dims) + " and " + dims_text(b.dims) + " do not broadcast");
  const std::vector<double> va = a.as_doubles(), vb = b.as_doubles();
  const std::vector<int64_t> sa = broadcast_strides(a.dims, dims), sb = broadcast_strides(b.dims, dims);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<double> out(static_cast<size_t>(n));
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t ia = 0, ib = 0;
    for (size_t k = 0; k < dims.size(); ++k) {
      ia += idx[k] * sa[k];
      ib += idx[k] * sb[k];
    }
    out[i] = f(va[ia], vb[ib]);
    for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
  return HostTensor::from_doubles(out_dtype, out, dims);
}

HostTensor host_where(const HostTensor& cond, const HostTensor& x, const HostTensor& y) {
  std::vector<int64_t> cx, dims;
  if (!broadcast_dims(cond.dims, x.dims, cx) || !broadcast_dims(cx, y.dims, dims))
    fail(DLRT_INVALID_ARGUMENT, "dims " + dims_text(cond.dims) + ", " + dims_text(x.dims) + " and " +
                                    dims_text(y.dims) + " do not broadcast");
  const std::vector<int64_t> sc = broadcast_strides(cond.dims, dims), sx = broadcast_strides(x.dims, dims),
                             sy = broadcast_strides(y.dims, dims);
  const std::vector<int64_t> take = cond.as_int64s();
  HostTensor out;
  out.dtype = x.dtype;
  out.dims = dims;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  out.bytes.resize(static_cast<size_t>(n) * dlrt_dtype_size(x.dtype));
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t ic = 0, ix = 0, iy = 0;
    for (size_t k = 0; k < dims.size(); ++k) {
      ic += idx[k] * sc[k];
      ix += idx[k] * sx[k];
      iy += idx[k] * sy[k];
    }
    if (take[ic] != 0) copy_element(x, ix, out, i);
    else copy_element(y, iy, out, i);
    for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

HostTensor host_unary(const HostTensor& a, dlrt_dtype out_dtype,
                      const std::function<double(double)>& f) {
  std::vector<double> v = a.as_doubles();
  for (double& x : v) x = f(x);
  return HostTensor::from_doubles(out_dtype, v, a.dims);
}

namespace {

// y = x transposed by `perm` for elements of E's size: one output row (the last output axis)
// at a time, its base offset in x computed once and its elements read at a fixed stride. The
// per-element form (an index sum over every axis and a memcpy of a run-time size) made this
// 18% of loading ResNet-50's light model (its 25.5M filter weights go OIHW -> HWIO here).
template <typename E>
void transpose_rows(const HostTensor& x, const std::vector<int64_t>& perm, HostTensor& y) {
  const size_t r = perm.size();
  const std::vector<int64_t> sx = strides_of(x.dims);
  const int64_t inner = y.dims[r - 1], step = sx[static_cast<size_t>(perm[r - 1])];
  const int64_t rows = inner == 0 ? 0 : y.element_count() / inner;
  const uint8_t* src = x.bytes.data();
  uint8_t* dst = y.bytes.data();
  std::vector<int64_t> idx(r - 1, 0);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t base = 0;
    for (size_t k = 0; k + 1 < r; ++k) base += idx[k] * sx[static_cast<size_t>(perm[k])];
    const uint8_t* s = src + base * static_cast<int64_t>(sizeof(E));
    uint8_t* d = dst + row * inner * static_cast<int64_t>(sizeof(E));
    for (int64_t t = 0; t < inner; ++t)
      std::memcpy(d + t * static_cast<int64_t>(sizeof(E)),
                  s + t * step * static_cast<int64_t>(sizeof(E)), sizeof(E));
    for (size_t k = r - 1; k-- > 0;) {
      if (++idx[k] < y.dims[k]) break;
      idx[k] = 0;
    }
  }
}

}  // namespace

HostTensor host_transpose(const HostTensor& x, const std::vector<int64_t>& perm) {
  HostTensor y;
  y.dtype = x.dtype;
  for (int64_t p : perm) y.dims.push_back(x.dims[p]);
  y.bytes.resize(x.bytes.size());
  if (perm.empty()) {  // a scalar
    y.bytes = x.bytes;
    return y;
  }
  switch (dlrt_dtype_size(x.dtype)) {
    case 1:
      transpose_rows<uint8_t>(x, perm, y);
      break;
    case 2:
      transpose_rows<uint16_t>(x, perm, y);
      break;
    case 8:
      transpose_rows<uint64_t>(x, perm, y);
      break;
    default:
      transpose_rows<uint32_t>(x, perm, y);
      break;
  }
  return y;
}

HostTensor host_gather(const HostTensor& x, const std::vector<int64_t>& indices,
                       const std::vector<int64_t>& index_dims, int64_t axis) {
  HostTensor y;
  y.dtype = x.dtype;
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= x.dims[k];
  for (size_t k = axis + 1; k < x.dims.size(); ++k) inner *= x.dims[k];
  y.dims.assign(x.dims.begin(), x.dims.begin() + axis);
  y.dims.insert(y.dims.end(), index_dims.begin(), index_dims.end());
  y.dims.insert(y.dims.end(), x.dims.begin() + axis + 1, x.dims.end());
  const int64_t m = static_cast<int64_t>(indices.size()), d = x.dims[axis];
  y.bytes.resize(static_cast<size_t>(outer * m * inner) * dlrt_dtype_size(x.dtype));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < m; ++k)
      for (int64_t i = 0; i < inner; ++i)
        copy_element(x, (o * d + indices[k]) * inner + i, y, (o * m + k) * inner + i);
  return y;
}

HostTensor host_slice(const HostTensor& x, const std::vector<int64_t>& starts,
                      const std::vector<int64_t>& steps, const std::vector<int64_t>& out_dims) {
  HostTensor y;
  y.dtype = x.dtype;
  y.dims = out_dims;
  int64_t n = 1;
  for (int64_t d : out_dims) n *= d;
  y.bytes.resize(static_cast<size_t>(n) * dlrt_dtype_size(x.dtype));
  const std::vector<int64_t> sx = strides_of(x.dims);
  std::vector<int64_t> idx(out_dims.size(), 0);
  for (int64_t j = 0; j < n; ++j) {
    int64_t i = 0;
    for (size_t k = 0; k < out_dims.size(); ++k) i += (starts[k] + idx[k] * steps[k]) * sx[k];
    copy_element(x, i, y, j);
    for (int64_t k = static_cast<int64_t>(out_dims.size()) - 1; k >= 0; --k) {
      if (++idx[k] < out_dims[k]) break;
      idx[k] = 0;
    }
  }
  return y;
}

HostTensor host_concat(const std::vector<const HostTensor*>& parts, int64_t axis) {
  HostTensor y;
  y.dtype = parts[0]->dtype;
  y.dims = parts[0]->dims;
  y.dims[axis] = 0;
  for (const HostTensor* p : parts) y.dims[axis] += p->dims[axis];
  int64_t outer = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= y.dims[k];
  const size_t es = dlrt_dtype_size(y.dtype);
  for (int64_t o = 0; o < outer; ++o)
    for (const HostTensor* p : parts) {
      const size_t chunk = p->bytes.size() / static_cast<size_t>(outer);
      const uint8_t* src = p->bytes.data() + o * chunk;
      y.bytes.insert(y.bytes.end(), src, src + chunk);
    }
  (void)es;
  return y;
}

HostTensor host_cast(const HostTensor& x, dlrt_dtype to) {
  if (x.dtype == to) return x;
  std::vector<double> v = x.as_doubles();
  if (to == DLRT_BOOL)
    for (double& e : v) e = e != 0 ? 1 : 0;
  // To an integer as the device cast converts (docs/ops.md): truncated toward zero, saturated
  // at the integer's range, NaN -> 0. (from_doubles alone would wrap, as folded arithmetic does.)
  double lo = 0, hi = 0;
  switch (to) {
    case DLRT_U8: hi = UINT8_MAX; break;
    case DLRT_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case DLRT_U16: hi = UINT16_MAX; break;
    case DLRT_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    case DLRT_U32: hi = UINT32_MAX; break;
    case DLRT_I32: lo = INT32_MIN, hi = INT32_MAX; break;
    case DLRT_U64: hi = 18446744073709551616.0; break;  // 2^64: from_doubles stores UINT64_MAX
    // The largest double below 2^63 (2^63 itself does not convert): 1023 short of INT64_MAX,
    // where the device cast gives INT64_MAX; a double that large was inexact anyway.
    case DLRT_I64: lo = -9223372036854775808.0, hi = 9223372036854774784.0; break;
    default: return HostTensor::from_doubles(to, v, x.dims);  // floats, bool
  }
  for (double& e : v) e = std::isnan(e) ? 0.0 : std::min(std::max(std::trunc(e), lo), hi);
  return HostTensor::from_doubles(to, v, x.dims);
}

}  // namespace dlrt::onnx_import
