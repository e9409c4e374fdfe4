// loop_train.cc: the cpu plugin's loop kernels of a training step around the layers: the fused
// sparse softmax cross-entropy (loss and backprop in one sweep per row), argmax and equal_count
// (accuracy), gather_rows (batches from an on-device dataset), and the fused optimizer updates
// sgd_update and adam_update, which the executor runs in place (adam_update's in-place f32 loop
// has an AVX2 build, loop_simd.hpp).
#include <cmath>
#include <limits>

#include "loop_simd.hpp"
#include "loop_util.hpp"
#include "portable_math.hpp"

namespace dlrt::cpu::loops {
namespace {

// exp, log: the same bits on every platform (portable_math.hpp).
namespace portable = plugin::portable;

// ---- sparse_softmax_cross_entropy --------------------------------------------------------

void check_sparse_xent(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(0));
  fill_cost(op, 15, cost);
}

// logits: (N,K), labels: (N) i32|i64 -> loss: (N), backprop: (N,K)
//   loss[n] = max + log(sum_j exp(x_j - max)) - x[label];  backprop[n] = softmax(x) - onehot(label)
// Per row: the max, then exp(x_j - max) written into backprop while summing (in double), then
// one scaling pass. A label outside [0,K) makes the loss and the backprop row NaN. backprop may
// alias logits (x[label] is read before the row is overwritten).
class SparseXentKernel : public LoopKernel {
 public:
  SparseXentKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        dtype_(op.input(0).dtype),
        label_dtype_(op.input(1).dtype),
        n_(op.input(0).dims[0]),
        k_(op.input(0).dims[1]) {}

  void execute(const dlrt_kernel_args& args) override {
    with_float(dtype_, [&](auto t) {
      with_index(label_dtype_, [&](auto l) {
        using T = decltype(t);
        using L = decltype(l);
        run_typed<T, L>(static_cast<const T*>(args.inputs[0]),
                        static_cast<const L*>(args.inputs[1]), static_cast<T*>(args.outputs[0]),
                        static_cast<T*>(args.outputs[1]));
      });
    });
  }

 private:
  template <typename T, typename L>
  void run_typed(const T* logits, const L* labels, T* loss, T* backprop) {
    const int64_t K = k_;
    parallel_for(n_, std::max<int64_t>(1, kGrainHeavy / K), threads_, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* x = logits + r * K;
        T* bp = backprop + r * K;
        const int64_t label = static_cast<int64_t>(labels[r]);
        if (label < 0 || label >= K) {
          loss[r] = std::numeric_limits<T>::quiet_NaN();
          std::fill(bp, bp + K, std::numeric_limits<T>::quiet_NaN());
          continue;
        }
        T mx = x[0];
        for (int64_t j = 1; j < K; ++j) mx = std::fmax(mx, x[j]);
        const T x_label = x[label];
        double sum = 0;
        for (int64_t j = 0; j < K; ++j) {
          const T ej = portable::exp(static_cast<T>(x[j] - mx));
          bp[j] = ej;
          sum += static_cast<double>(ej);
        }
        loss[r] = static_cast<T>(static_cast<double>(mx) + portable::log(sum) -
                                 static_cast<double>(x_label));
        const T inv = static_cast<T>(1.0 / sum);
        for (int64_t j = 0; j < K; ++j) bp[j] *= inv;
        bp[label] -= T(1);
      }
    });
  }

  int32_t dtype_, label_dtype_;
  int64_t n_, k_;
};

// ---- argmax ------------------------------------------------------------------------------

void check_argmax(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(0));
  fill_cost(op, 1, cost);
}

// x: (outer, K, inner) around axis -> y: (outer, inner), the first index of the max along K;
// a NaN counts as the max and its first occurrence wins (NumPy, and the reference).
class ArgmaxKernel : public LoopKernel {
 public:
  ArgmaxKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), dtype_(op.input(0).dtype), out_dtype_(op.output(0).dtype) {
    const TensorView& x = op.input(0);
    const int64_t a = op.get_int("axis");
    const int axis = static_cast<int>(a < 0 ? a + x.rank() : a);
    k_ = x.dims[axis];
    for (int d = 0; d < axis; ++d) outer_ *= x.dims[d];
    for (int d = axis + 1; d < x.rank(); ++d) inner_ *= x.dims[d];
  }

  void execute(const dlrt_kernel_args& args) override {
    with_float(dtype_, [&](auto t) {
      with_index(out_dtype_, [&](auto o) {
        using T = decltype(t);
        using I = decltype(o);
        const T* x = static_cast<const T*>(args.inputs[0]);
        I* y = static_cast<I*>(args.outputs[0]);
        const int64_t K = k_, inner = inner_;
        parallel_for(outer_ * inner, std::max<int64_t>(1, kGrainCheap / K), threads_,
                     [&](int64_t b, int64_t e) {
                       for (int64_t r = b; r < e; ++r) {
                         const int64_t o = inner == 1 ? r : r / inner,
                                       i = inner == 1 ? 0 : r % inner;
                         const T* row = x + o * K * inner + i;  // stride `inner` along K
                         int64_t best = 0;
                         T best_v = row[0];
                         for (int64_t j = 1; j < K && !std::isnan(best_v); ++j) {
                           const T v = row[j * inner];
                           if (v > best_v || std::isnan(v)) best = j, best_v = v;
                         }
                         y[r] = static_cast<I>(best);
                       }
                     });
      });
    });
  }

 private:
  int32_t dtype_, out_dtype_;
  int64_t outer_ = 1, k_ = 1, inner_ = 1;
};

// ---- equal_count -------------------------------------------------------------------------

// equal_count and gather_rows run every dtype the schema admits.
void check_index_op(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  fill_cost(op, 1, cost);
}

// a: (N), b: (N), i32|i64 each -> count: () f32, the number of i with a[i] == b[i]
class EqualCountKernel : public LoopKernel {
 public:
  EqualCountKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), da_(op.input(0).dtype), db_(op.input(1).dtype), n_(op.input(0).numel) {}

  void execute(const dlrt_kernel_args& args) override {
    int64_t total = 0;
    with_index(da_, [&](auto ta) {
      with_index(db_, [&](auto tb) {
        using A = decltype(ta);
        using B = decltype(tb);
        const A* a = static_cast<const A*>(args.inputs[0]);
        const B* b = static_cast<const B*>(args.inputs[1]);
        const int64_t n = n_;
        if (n < kGrainCheap || threads_ == 1) {
          for (int64_t i = 0; i < n; ++i)
            total += static_cast<int64_t>(a[i]) == static_cast<int64_t>(b[i]);
        } else {
#pragma omp parallel for num_threads(threads_) reduction(+ : total) schedule(static)
          for (int64_t i = 0; i < n; ++i)
            total += static_cast<int64_t>(a[i]) == static_cast<int64_t>(b[i]);
        }
      });
    });
    *static_cast<float*>(args.outputs[0]) = static_cast<float>(total);
  }

 private:
  int32_t da_, db_;
  int64_t n_;
};

// ---- gather_rows -------------------------------------------------------------------------

// params: (R,...), indices: (B) -> y: (B,...); y[b] = params[indices[b]], a zero row when the
// index is outside [0,R). Any params dtype (rows are bytes).
class GatherRowsKernel : public LoopKernel {
 public:
  GatherRowsKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        index_dtype_(op.input(1).dtype),
        rows_(op.input(0).dims[0]),
        batch_(op.input(1).dims[0]),
        row_bytes_(op.input(0).bytes / static_cast<size_t>(op.input(0).dims[0])) {}

  void execute(const dlrt_kernel_args& args) override {
    with_index(index_dtype_, [&](auto t) {
      using I = decltype(t);
      const auto* src = static_cast<const unsigned char*>(args.inputs[0]);
      const I* idx = static_cast<const I*>(args.inputs[1]);
      auto* dst = static_cast<unsigned char*>(args.outputs[0]);
      const int64_t grain =
          std::max<int64_t>(1, kGrainCheap * 8 / static_cast<int64_t>(row_bytes_));
      parallel_for(batch_, grain, threads_, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t r = static_cast<int64_t>(idx[i]);
          if (r >= 0 && r < rows_)
            std::memcpy(dst + i * row_bytes_, src + r * row_bytes_, row_bytes_);
          else std::memset(dst + i * row_bytes_, 0, row_bytes_);
        }
      });
    });
  }

 private:
  int32_t index_dtype_;
  int64_t rows_, batch_;
  size_t row_bytes_;
};

// ---- optimizer updates -------------------------------------------------------------------

// param, grad, ... : the same float dtype and dims; the scalars (adam's step, the
// learning_rate of both, read at run time: a schedule changes it between steps) are () f32,
// or f64 in the f64 tests.
inline double read_scalar(int32_t dtype, const void* p) {
  return dtype == DLRT_F64 ? *static_cast<const double*>(p)
                           : static_cast<double>(*static_cast<const float*>(p));
}

void check_sgd(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(0));
  fill_cost(op, 5, cost);
}

// One SGD element (Keras): v = momentum*v - lr*g; p += nesterov ? momentum*v - lr*g : v.
template <typename T>
struct SgdStep {
  T lr, mom;
  bool nesterov;
  void operator()(T& p, T g, T& v) const {
    const T v_new = mom * v - lr * g;
    p = p + (nesterov ? mom * v_new - lr * g : v_new);
    v = v_new;
  }
};

// One Adam element (Keras), lr_t folding in the bias corrections of this step.
template <typename T>
struct AdamStep {
  T lr_t, b1, b2, eps;
  DLRT_SIMD_INLINE void operator()(T& p, T g, T& m, T& v) const {
    const T m_new = b1 * m + (T(1) - b1) * g;
    const T v_new = b2 * v + (T(1) - b2) * g * g;
    p = p - lr_t * m_new / (std::sqrt(v_new) + eps);
    m = m_new;
    v = v_new;
  }
};

// The executor runs updates in place (outputs == inputs); any other aliasing is element-wise too.
// Three loops: in place (restrict per array: each is reached through one pointer), disjoint
// (restrict everywhere), and anything else (no restrict: every element reads its inputs before
// writing, so any same-index aliasing stays correct).
template <typename T, typename Step>
void sgd_loop(const Step& step, const T* p, const T* g, const T* v, T* po, T* vo, int64_t b,
              int64_t e) {
  for (int64_t i = b; i < e; ++i) {
    T pi = p[i], vi = v[i];
    step(pi, g[i], vi);
    po[i] = pi;
    vo[i] = vi;
  }
}
template <typename T, typename Step>
void sgd_inplace(const Step& step, T* __restrict p, const T* __restrict g, T* __restrict v,
                 int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) step(p[i], g[i], v[i]);
}
template <typename T, typename Step>
void sgd_disjoint(const Step& step, const T* __restrict p, const T* __restrict g,
                  const T* __restrict v, T* __restrict po, T* __restrict vo, int64_t b, int64_t e) {
  sgd_loop(step, p, g, v, po, vo, b, e);
}

template <typename T, typename Step>
void adam_loop(const Step& step, const T* p, const T* g, const T* m, const T* v, T* po, T* mo,
               T* vo, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) {
    T pi = p[i], mi = m[i], vi = v[i];
    step(pi, g[i], mi, vi);
    po[i] = pi;
    mo[i] = mi;
    vo[i] = vi;
  }
}
template <typename T, typename Step>
void adam_inplace(const Step& step, T* __restrict p, const T* __restrict g, T* __restrict m,
                  T* __restrict v, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) step(p[i], g[i], m[i], v[i]);
}
template <typename T, typename Step>
void adam_disjoint(const Step& step, const T* __restrict p, const T* __restrict g,
                   const T* __restrict m, const T* __restrict v, T* __restrict po, T* __restrict mo,
                   T* __restrict vo, int64_t b, int64_t e) {
  adam_loop(step, p, g, m, v, po, mo, vo, b, e);
}

// The in-place f32 Adam loop (what the executor runs) with an AVX2 build (loop_simd.hpp); the
// element arithmetic is the same IEEE operations on both paths (no FMA), so the same bits.
DLRT_TARGET_AVX2 void adam_inplace_f32_avx2(const AdamStep<float>& step, float* __restrict p,
                                            const float* __restrict g, float* __restrict m,
                                            float* __restrict v, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) step(p[i], g[i], m[i], v[i]);
}

// True when no two of the byte ranges [ptr, ptr+bytes) overlap.
inline bool disjoint(std::initializer_list<const void*> ptrs, size_t bytes) {
  for (auto a = ptrs.begin(); a != ptrs.end(); ++a)
    for (auto b = a + 1; b != ptrs.end(); ++b) {
      const auto* x = static_cast<const unsigned char*>(*a);
      const auto* y = static_cast<const unsigned char*>(*b);
      if (x < y + bytes && y < x + bytes) return false;
    }
  return true;
}

// param, grad, velocity -> param, velocity (in place)
class SgdKernel : public LoopKernel {
 public:
  SgdKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        dtype_(op.input(0).dtype),
        n_(op.input(0).numel),
        bytes_(op.input(0).bytes),
        lr_dtype_(op.input(3).dtype),
        mom_(op.get_float("momentum")),
        nesterov_(op.get_bool("nesterov")) {}

  void execute(const dlrt_kernel_args& args) override {
    const double lr = read_scalar(lr_dtype_, args.inputs[3]);
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const T *p = static_cast<const T*>(args.inputs[0]),
              *g = static_cast<const T*>(args.inputs[1]),
              *v = static_cast<const T*>(args.inputs[2]);
      T *po = static_cast<T*>(args.outputs[0]), *vo = static_cast<T*>(args.outputs[1]);
      const SgdStep<T> step{static_cast<T>(lr), static_cast<T>(mom_), nesterov_};
      const bool inplace = po == p && vo == v && disjoint({p, g, v}, bytes_);
      const bool separate = disjoint({p, g, v, po, vo}, bytes_);
      parallel_for(n_, kGrainCheap, threads_, [&](int64_t b, int64_t e) {
        if (inplace) sgd_inplace(step, po, g, vo, b, e);
        else if (separate) sgd_disjoint(step, p, g, v, po, vo, b, e);
        else sgd_loop(step, p, g, v, po, vo, b, e);
      });
    });
  }

 private:
  int32_t dtype_;
  int64_t n_;
  size_t bytes_;
  int32_t lr_dtype_;
  double mom_;
  bool nesterov_;
};

void check_adam(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(0));
  fill_cost(op, 12, cost);
}

// beta^t for Adam's bias corrections. The step is a whole number in practice (the iterations
// variable): then by squaring, the same bits on every platform (portable_math.hpp); the C
// library's pow, which differs between glibc and mingw by an ulp (pow(0.9, 4)), made the
// Linux and Windows builds' training drift apart from the second step on.
double bias_power(double beta, double step) {
  if (step >= 0 && step <= 9007199254740992.0 &&
      step == static_cast<double>(static_cast<uint64_t>(step)))
    return portable::pow_int(beta, static_cast<uint64_t>(step));
  return std::pow(beta, step);
}

// param, grad, m, v: same shape, step, learning_rate: () f32 -> param, m, v (in place)
//   lr_t = lr * sqrt(1 - beta2^step) / (1 - beta1^step)   (in double, once per run)
//   m = beta1*m + (1-beta1)*g;  v = beta2*v + (1-beta2)*g^2;  p -= lr_t * m / (sqrt(v) + epsilon)
class AdamKernel : public LoopKernel {
 public:
  AdamKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        dtype_(op.input(0).dtype),
        step_dtype_(op.input(4).dtype),
        n_(op.input(0).numel),
        bytes_(op.input(0).bytes),
        lr_dtype_(op.input(5).dtype),
        b1_(op.get_float("beta1")),
        b2_(op.get_float("beta2")),
        eps_(op.get_float("epsilon")) {}

  void execute(const dlrt_kernel_args& args) override {
    const double step_no = read_scalar(step_dtype_, args.inputs[4]);
    const double lr = read_scalar(lr_dtype_, args.inputs[5]);
    const double lr_t =
        lr * std::sqrt(1.0 - bias_power(b2_, step_no)) / (1.0 - bias_power(b1_, step_no));
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const T *p = static_cast<const T*>(args.inputs[0]),
              *g = static_cast<const T*>(args.inputs[1]),
              *m = static_cast<const T*>(args.inputs[2]),
              *v = static_cast<const T*>(args.inputs[3]);
      T *po = static_cast<T*>(args.outputs[0]), *mo = static_cast<T*>(args.outputs[1]),
        *vo = static_cast<T*>(args.outputs[2]);
      const AdamStep<T> step{static_cast<T>(lr_t), static_cast<T>(b1_), static_cast<T>(b2_),
                             static_cast<T>(eps_)};
      const bool inplace = po == p && mo == m && vo == v && disjoint({p, g, m, v}, bytes_);
      const bool separate = disjoint({p, g, m, v, po, mo, vo}, bytes_);
      parallel_for(n_, kGrainCheap / 2, threads_, [&](int64_t b, int64_t e) {
        if constexpr (std::is_same_v<T, float>) {
          if (inplace && avx2_) return adam_inplace_f32_avx2(step, po, g, mo, vo, b, e);
        }
        if (inplace) adam_inplace(step, po, g, mo, vo, b, e);
        else if (separate) adam_disjoint(step, p, g, m, v, po, mo, vo, b, e);
        else adam_loop(step, p, g, m, v, po, mo, vo, b, e);
      });
    });
  }

 private:
  int32_t dtype_, step_dtype_, lr_dtype_;
  int64_t n_;
  size_t bytes_;
  double b1_, b2_, eps_;
};

}  // namespace

DLRT_CPU_KERNELS(t) {
  t.push_back({"sparse_softmax_cross_entropy", check_sparse_xent, make<SparseXentKernel>});
  t.push_back({"argmax", check_argmax, make<ArgmaxKernel>});
  t.push_back({"equal_count", check_index_op, make<EqualCountKernel>});
  t.push_back({"gather_rows", check_index_op, make<GatherRowsKernel>});
  t.push_back({"sgd_update", check_sgd, make<SgdKernel>});
  t.push_back({"adam_update", check_adam, make<AdamKernel>});
}

}  // namespace dlrt::cpu::loops
