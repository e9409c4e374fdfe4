// loop_seq.cc: the cpu plugin's loop kernels for the sequence ops (core/ops/infer_seq.cc);
// oneDNN has none of them.
//
//   one_hot  parallel over ids: each id's row is off_value, then on_value at the id when it
//            lies in [0, depth) (an out-of-range id leaves the row all off, as the reference)
//   cumsum   f32/f64 (and the integers, wrapping), parallel over (outer, inner) lines, each walked along the axis in scan
//            order with a double running sum (the reference's order: the same bits on every
//            run and thread count)
//   top_k    f32/f64, parallel over rows; each row a std::partial_sort of its positions by
//            the total order "larger value first, NaN above every number, lower index on
//            ties" (so the result is unique), then by index when sorted = false
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "loop_util.hpp"

namespace dlrt::cpu::loops {
namespace {

void check_one_hot(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  const int32_t t = op.output(0).dtype;
  if (t != DLRT_F32 && t != DLRT_I32 && t != DLRT_I64)
    unimplemented(op, std::string("y: supports f32, i32 and i64, got ") + plugin::dtype_name(t));
  fill_cost(op, 1, cost);
}

// indices: (I...) -> y: (I..., D)
class OneHotKernel : public LoopKernel {
 public:
  OneHotKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        index_dtype_(op.input(0).dtype),
        out_dtype_(op.output(0).dtype),
        n_(op.input(0).numel),
        depth_(op.get_int("depth")),
        on_(op.get_float("on_value")),
        off_(op.get_float("off_value")) {}

  void execute(const dlrt_kernel_args& args) override {
    with_index(index_dtype_, [&](auto it) {
      using I = decltype(it);
      const I* ids = static_cast<const I*>(args.inputs[0]);
      if (out_dtype_ == DLRT_F32) fill<float>(ids, args.outputs[0]);
      else if (out_dtype_ == DLRT_I32) fill<int32_t>(ids, args.outputs[0]);
      else fill<int64_t>(ids, args.outputs[0]);
    });
  }

 private:
  // on/off converted as the reference's store_double does for these three dtypes (the schema
  // samples give integer-valued on/off for integer outputs).
  template <typename T, typename I>
  void fill(const I* ids, void* out) const {
    T* y = static_cast<T*>(out);
    const T on = static_cast<T>(on_), off = static_cast<T>(off_);
    const int64_t depth = depth_;
    const int64_t grain = std::max<int64_t>(1, kGrainCheap / depth);
    parallel_for(n_, grain, threads_, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        T* row = y + i * depth;
        for (int64_t d = 0; d < depth; ++d) row[d] = off;
        const int64_t id = static_cast<int64_t>(ids[i]);
        if (id >= 0 && id < depth) row[id] = on;
      }
    });
  }

  int32_t index_dtype_, out_dtype_;
  int64_t n_, depth_;
  double on_, off_;
};

void check_cumsum(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_numeric(op, op.input(0));
  plugin::normalize_axis(op.get_int("axis"), op.input(0).rank(), op.name());
  fill_cost(op, 1, cost);
}

// x: (outer, K, inner) around the axis -> y: same
class CumsumKernel : public LoopKernel {
 public:
  CumsumKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        dtype_(op.input(0).dtype),
        exclusive_(op.get_bool("exclusive")),
        reverse_(op.get_bool("reverse")) {
    const TensorView& x = op.input(0);
    const int axis = plugin::normalize_axis(op.get_int("axis"), x.rank(), op.name());
    k_ = x.dims[axis];
    for (int d = 0; d < axis; ++d) outer_ *= x.dims[d];
    for (int d = axis + 1; d < x.rank(); ++d) inner_ *= x.dims[d];
  }

  void execute(const dlrt_kernel_args& args) override {
    with_numeric(dtype_, [&](auto t) { scan<decltype(t)>(args); });
  }

 private:
  template <typename T>
  void scan(const dlrt_kernel_args& args) const {
    const T* x = static_cast<const T*>(args.inputs[0]);
    T* y = static_cast<T*>(args.outputs[0]);
    const int64_t k = k_, inner = inner_;
    const bool exclusive = exclusive_, reverse = reverse_;
    const int64_t grain = std::max<int64_t>(1, kGrainCheap / k);
    parallel_for(outer_ * inner_, grain, threads_, [&](int64_t b, int64_t e) {
      for (int64_t l = b; l < e; ++l) {
        const int64_t base = (l / inner) * k * inner + l % inner;
        using Sum = typename ScanSum<T>::type;
        Sum sum = 0;
        for (int64_t step = 0; step < k; ++step) {
          const int64_t at = base + (reverse ? k - 1 - step : step) * inner;
          const Sum v = static_cast<Sum>(x[at]);
          if (!exclusive) sum += v;
          y[at] = static_cast<T>(sum);
          if (exclusive) sum += v;
        }
      }
    });
  }

  int32_t dtype_;
  bool exclusive_, reverse_;
  int64_t outer_ = 1, k_ = 1, inner_ = 1;
};

void check_top_k(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(0));
  fill_cost(op, 8, cost);
}

// x: (rows, N) -> values, indices: (rows, k)
class TopKKernel : public LoopKernel {
 public:
  TopKKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        dtype_(op.input(0).dtype),
        n_(op.input(0).dims.back()),
        rows_(op.input(0).numel / op.input(0).dims.back()),
        k_(op.get_int("k")),
        sorted_(op.get_bool("sorted")) {}

  void execute(const dlrt_kernel_args& args) override {
    if (dtype_ == DLRT_F64) select<double>(args);
    else select<float>(args);
  }

 private:
  template <typename T>
  void select(const dlrt_kernel_args& args) const {
    const T* x = static_cast<const T*>(args.inputs[0]);
    T* values = static_cast<T*>(args.outputs[0]);
    int64_t* indices = static_cast<int64_t*>(args.outputs[1]);
    const int64_t n = n_, k = k_;
    const bool sorted = sorted_;
    const int64_t grain = std::max<int64_t>(1, kGrainHeavy / n);
    parallel_for(rows_, grain, threads_, [&](int64_t b, int64_t e) {
      std::vector<int64_t> order(static_cast<size_t>(n));  // one per chunk
      for (int64_t r = b; r < e; ++r) {
        const T* row = x + r * n;
        std::iota(order.begin(), order.end(), int64_t{0});
        std::partial_sort(order.begin(), order.begin() + k, order.end(),
                          [row](int64_t a, int64_t c) {
                            const bool na = std::isnan(row[a]), nc = std::isnan(row[c]);
                            if (na != nc) return na;
                            if (!na && row[a] != row[c]) return row[a] > row[c];
                            return a < c;
                          });
        if (!sorted) std::sort(order.begin(), order.begin() + k);
        for (int64_t j = 0; j < k; ++j) {
          values[r * k + j] = row[order[size_t(j)]];
          indices[r * k + j] = order[size_t(j)];
        }
      }
    });
  }

  int32_t dtype_;
  int64_t n_, rows_, k_;
  bool sorted_;
};

}  // namespace

DLRT_CPU_KERNELS(t) {
  t.push_back({"one_hot", check_one_hot, make<OneHotKernel>});
  t.push_back({"cumsum", check_cumsum, make<CumsumKernel>});
  t.push_back({"top_k", check_top_k, make<TopKKernel>});
}

}  // namespace dlrt::cpu::loops
