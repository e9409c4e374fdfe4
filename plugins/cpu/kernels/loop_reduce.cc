// loop_reduce.cc: reduce_sum, reduce_mean and reduce_max along any set of axes, at any rank, in
// one pass over x at memory speed.
//
// x: any shape, y: x's dims without (or with 1 along, keepdims) the reduced axes.
//
// How: x is walked in storage order as a Walk<2> (loop_util.hpp) whose second operand is y with
// stride 0 along reduced dims, so dims of size 1 vanish and neighbours of the same kind merge:
// the rank-6 (N,H,2,W,2,C) -> (N,H,W,C) reduction of an upsampling gradient becomes five
// alternating groups, a bias gradient (N*H*W, C) -> (C) two. Each innermost row of x is then one
// of two loops the compiler vectorises:
//   - the row is reduced (y's inner stride 0): acc = sum/max of x[0:len], then y[o] op= acc;
//   - the row is kept (y's inner stride 1):    y[o+j] op= x[j] for j < len.
// Sums accumulate in double (as the reference does), into a scratch of y's size per thread,
// which also keeps threads from writing the same y element: thread t walks a contiguous
// share of x into its own scratch, and the shares are added (in thread order, so the result
// does not depend on timing) when the walk ends. When x's outermost walk dim is kept and has a
// slice per thread, the threads' y regions are disjoint and one scratch serves all of them.
// Everything is allocated at create; run only walks memory.
//
// Why not oneDNN's reduction primitive: on Debian's oneDNN 2.6 a reduction over non-trailing
// axes of a rank-6 tensor took 18 of 26 ms of a training step; this loop streams it at memory
// speed (docs/benchmarks.md, the section on reductions along non-trailing axes; dlbench ops
// "reduce_sum.rank6_upsample_grad").
#include <algorithm>
#include <limits>

#include "loop_util.hpp"

namespace dlrt::cpu::loops {
namespace {

enum class Kind { kSum, kMean, kMax };

// max with NaN sticky, as the reference: once a NaN is seen it stays (b != b is NaN's test).
template <typename T>
inline T nan_max(T a, T b) {
  return b > a || b != b ? b : a;
}

// sum of x[0:len] in double, in 8 interleaved partial sums: one chain of dependent adds would
// run at a quarter of the loads' speed, and the compiler may not reorder float adds itself.
template <typename T>
inline double row_sum(const T* x, int64_t len) {
  double p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 8 <= len; j += 8)
    for (int k = 0; k < 8; ++k) p[k] += double(x[j + k]);
  double s = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
  for (; j < len; ++j) s += double(x[j]);
  return s;
}

void check_reduce(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(0));
  fill_cost(op, 1, cost);
}

class ReduceKernel : public LoopKernel {
 public:
  ReduceKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        dtype_(op.input(0).dtype),
        kind_(op.name() == "reduce_sum"    ? Kind::kSum
              : op.name() == "reduce_mean" ? Kind::kMean
                                           : Kind::kMax) {
    const std::vector<int64_t>& xd = op.input(0).dims;
    const ReduceGeom g = reduce_geom(op, xd);
    walk_ = make_walk<2>(xd.empty() ? std::vector<int64_t>{1} : xd,
                         {plugin::row_major_strides(xd.empty() ? std::vector<int64_t>{1} : xd),
                          g.y_strides.empty() ? std::vector<int64_t>{0} : g.y_strides});
    out_ = g.out_numel;
    const int64_t n = walk_.numel;
    scale_ = kind_ == Kind::kMean && out_ > 0 ? double(out_) / double(std::max<int64_t>(n, 1)) : 1;
    // Disjoint outputs when the outermost walk dim is kept: split over its index.
    outer_kept_ = walk_.strides[1][0] != 0 && walk_.dims[0] >= 2;
    const int64_t chunks = std::max<int64_t>(1, n / kGrainCheap);
    int nt = static_cast<int>(std::min<int64_t>(threads_, chunks));
    if (outer_kept_) nt = static_cast<int>(std::min<int64_t>(nt, walk_.dims[0]));
    // Private scratches cost out_ doubles each; beyond x's own size they are not worth it.
    if (!outer_kept_ && out_ * nt > std::max<int64_t>(n, 1 << 16)) nt = 1;
    threads_used_ = std::max(nt, 1);
    scratch_.assign(static_cast<size_t>(out_ * (outer_kept_ ? 1 : threads_used_)), 0.0);
  }

  void execute(const dlrt_kernel_args& args) override {
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      run_typed(static_cast<const T*>(args.inputs[0]), static_cast<T*>(args.outputs[0]));
    });
  }

 private:
  double identity() const {
    return kind_ == Kind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
  }

  // Walks x[begin, end) into acc (y's size, stride as y).
  template <typename T>
  void walk(const T* x, int64_t begin, int64_t end, double* acc) const {
    const bool is_max = kind_ == Kind::kMax;
    const int64_t sy = walk_.inner_stride(1);
    for_each_segment(walk_, begin, end, [&](int64_t, const int64_t* off, int64_t len) {
      const T* xs = x + off[0];
      double* ys = acc + off[1];
      if (sy == 0) {  // the row is reduced into one y element
        if (is_max) {
          T m = xs[0];
          for (int64_t j = 1; j < len; ++j) m = nan_max(m, xs[j]);
          *ys = nan_max(*ys, double(m));
        } else {
          *ys += row_sum(xs, len);
        }
      } else if (is_max) {  // the row is kept: one y element per x element
        for (int64_t j = 0; j < len; ++j) ys[j] = nan_max(ys[j], double(xs[j]));
      } else {
        for (int64_t j = 0; j < len; ++j) ys[j] += double(xs[j]);
      }
    });
  }

  template <typename T>
  void run_typed(const T* x, T* y) {
    const int64_t n = walk_.numel;
    const int nt = threads_used_;
    double* s = scratch_.data();
    std::fill(scratch_.begin(), scratch_.end(), identity());
    if (nt <= 1) {
      walk(x, 0, n, s);
    } else if (outer_kept_) {
      const int64_t slice = n / walk_.dims[0];  // x elements per outer index
#pragma omp parallel num_threads(nt)
      {
        const int64_t k = omp_get_thread_num(), m = omp_get_num_threads();
        const int64_t b = walk_.dims[0] * k / m, e = walk_.dims[0] * (k + 1) / m;
        if (b < e) walk(x, b * slice, e * slice, s);
      }
    } else {
#pragma omp parallel num_threads(nt)
      {
        const int64_t k = omp_get_thread_num(), m = omp_get_num_threads();
        if (n * k / m < n * (k + 1) / m) walk(x, n * k / m, n * (k + 1) / m, s + k * out_);
      }
      for (int k = 1; k < nt; ++k) {  // in thread order: the result does not depend on timing
        const double* p = s + k * out_;
        if (kind_ == Kind::kMax) {
          for (int64_t o = 0; o < out_; ++o) s[o] = nan_max(s[o], p[o]);
        } else {
          for (int64_t o = 0; o < out_; ++o) s[o] += p[o];
        }
      }
    }
    for (int64_t o = 0; o < out_; ++o) y[o] = static_cast<T>(s[o] * scale_);
  }

  int32_t dtype_;
  Kind kind_;
  Walk<2> walk_;  // over x (dense) with y's strides (0 along reduced dims)
  int64_t out_ = 1;
  double scale_ = 1;  // 1/count for reduce_mean
  bool outer_kept_ = false;
  int threads_used_ = 1;
  std::vector<double> scratch_;  // out_ doubles, times threads_used_ unless outer_kept_
};

}  // namespace

DLRT_CPU_KERNELS(t) {
  for (const char* name : {"reduce_sum", "reduce_mean", "reduce_max"})
    t.push_back({name, check_reduce, make<ReduceKernel>});
}

}  // namespace dlrt::cpu::loops
