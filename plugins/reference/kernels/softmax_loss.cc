// softmax_loss.cc: softmax and log_softmax along one axis (max-subtracted, in double), and
// sparse softmax cross-entropy with integer labels, whose second output is its gradient
// wrt the logits (softmax - onehot), as TensorFlow's fused op gives it.
#include <cmath>
#include <limits>

#include "kernel_util.hpp"

namespace dlrt::reference::detail {
namespace {

// x: (outer, K, inner) around `axis` -> y: same; y = exp(x - max) / sum, or x - max - log(sum)
void run_softmax(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const TensorView& x = op.input(0);
  const int axis = plugin::normalize_axis(op.get_int("axis"), x.rank(), op.name());
  int64_t outer = 1, k = x.dims[axis], inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.dims[d];
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dims[d];
  const bool log_out = op.name() == "log_softmax";
  with_float(x.dtype, [&](auto t) {
    using T = decltype(t);
    const T* xp = static_cast<const T*>(in[0]);
    T* y = static_cast<T*>(out[0]);
    std::vector<double> row(static_cast<size_t>(k));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * k * inner + i;
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < k; ++j) {
          row[j] = double(xp[base + j * inner]);
          mx = std::fmax(mx, row[j]);
        }
        double sum = 0.0;
        for (int64_t j = 0; j < k; ++j) sum += std::exp(row[j] - mx);
        for (int64_t j = 0; j < k; ++j)
          y[base + j * inner] =
              static_cast<T>(log_out ? row[j] - mx - std::log(sum) : std::exp(row[j] - mx) / sum);
      }
  });
}

// logits: (N,K), labels: (N) i32|i64 -> loss: (N), backprop: (N,K)
// loss[n] = logsumexp(logits[n]) - logits[n, label]; backprop[n] = softmax(logits[n]) - onehot(label)
// A label outside [0,K) makes its loss and its backprop row NaN.
void run_sparse_xent(const OpView& op, const void* const* in, void* const* out, uint64_t) {
  const int64_t n = op.input(0).dims[0], k = op.input(0).dims[1];
  const int32_t label_dtype = op.input(1).dtype;
  with_float(op.input(0).dtype, [&](auto t) {
    using T = decltype(t);
    const T* logits = static_cast<const T*>(in[0]);
    T* loss = static_cast<T*>(out[0]);
    T* backprop = static_cast<T*>(out[1]);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> row(static_cast<size_t>(k));
    for (int64_t r = 0; r < n; ++r) {
      const int64_t label = load_index(in[1], label_dtype, r);
      const bool valid = label >= 0 && label < k;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < k; ++j) {
        row[j] = double(logits[r * k + j]);
        mx = std::fmax(mx, row[j]);
      }
      double sum = 0.0;
      for (int64_t j = 0; j < k; ++j) sum += std::exp(row[j] - mx);
      const double lse = mx + std::log(sum);
      loss[r] = static_cast<T>(valid ? lse - row[label] : nan);
      for (int64_t j = 0; j < k; ++j)
        backprop[r * k + j] =
            static_cast<T>(valid ? std::exp(row[j] - mx) / sum - (j == label ? 1.0 : 0.0) : nan);
    }
  });
}

}  // namespace

DLRT_REFERENCE_KERNELS(t) {
  t.push_back({"softmax", run_softmax, check_float});
  t.push_back({"log_softmax", run_softmax, check_float});
  t.push_back({"sparse_softmax_cross_entropy", run_sparse_xent, check_float});
}

}  // namespace dlrt::reference::detail
