// loop_cut_join.cc: the cpu plugin's loop kernels for the ops that cut, join and frame
// tensors:
//
//   concat (dtypes oneDNN's concat lacks)  x0, x1, ... -> y      memcpy of each part's run per row
//   split                                   x -> y0, y1, ...      the same runs the other way
//   slice                                   x -> y                strided gather (a Walk)
//   slice_grad                              dy -> dx (shape)      zeros, then a strided scatter
//   pad, mode "constant"                    x -> y                fill with value, scatter x in
//   pad, mode "reflect"                     x -> y                per row: the mirrored source
//                                                                 row, interior by memcpy
//   pad_grad                                dy -> dx              per row: adds dy back onto
//                                                                 the mirrored cells (serial)
//
// The core hands only schema-checked descriptors with the normalised attributes
// (core/ops/infer_shape_ops.cc): axis in 0..rank-1, slice's begin (the first index taken) and
// strides on every dim (docs/design.md, "What a plugin may trust"). concat/split/slice move
// any dtype as 1/2/4/8-byte words; slice_grad, pad and pad_grad take f32 and f64.
// pad_grad runs on one thread: several dy rows add onto the same dx row.
#include "loop_cut_join.hpp"

#include "loop_util.hpp"

namespace dlrt::cpu::loops {
namespace {

using Dims = std::vector<int64_t>;

int64_t prod(const Dims& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= d[i];
  return p;
}

// ---- concat and split ----------------------------------------------------------------------

// whole (A..., L, B...) <-> parts (A..., L_k, B...): for each of the |A| rows of whole, part k
// holds the next L_k*|B| elements. Parallel over rows (each row's runs are disjoint).
class PartsKernel : public LoopKernel {
 public:
  PartsKernel(const dlrt_plugin& p, const OpView& op, bool to_whole)
      : LoopKernel(p), to_whole_(to_whole) {
    const TensorView& whole = to_whole ? op.output(0) : op.input(0);
    const std::vector<TensorView>& parts = to_whole ? op.inputs() : op.outputs();
    const int axis = static_cast<int>(op.get_int("axis"));
    const size_t esize = plugin::dtype_size(whole.dtype);
    const int64_t inner = prod(whole.dims, axis + 1, whole.dims.size());
    rows_ = prod(whole.dims, 0, axis);
    row_bytes_ = whole.dims[axis] * inner * static_cast<int64_t>(esize);
    for (const TensorView& t : parts) run_bytes_.push_back(t.dims[axis] * inner * int64_t(esize));
  }

  void execute(const dlrt_kernel_args& args) override {
    const size_t n = run_bytes_.size();
    auto* whole = static_cast<unsigned char*>(to_whole_ ? args.outputs[0]
                                                        : const_cast<void*>(args.inputs[0]));
    auto part = [&](size_t k) {
      return static_cast<unsigned char*>(to_whole_ ? const_cast<void*>(args.inputs[k])
                                                   : args.outputs[k]);
    };
    const int64_t grain = std::max<int64_t>(1, kGrainCheap * 8 / std::max<int64_t>(1, row_bytes_));
    parallel_for(rows_, grain, threads_, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        unsigned char* w = whole + r * row_bytes_;
        for (size_t k = 0; k < n; ++k) {
          unsigned char* p = part(k) + r * run_bytes_[k];
          if (to_whole_) std::memcpy(w, p, static_cast<size_t>(run_bytes_[k]));
          else std::memcpy(p, w, static_cast<size_t>(run_bytes_[k]));
          w += run_bytes_[k];
        }
      }
    });
  }

 private:
  bool to_whole_;
  int64_t rows_ = 1, row_bytes_ = 0;
  std::vector<int64_t> run_bytes_;
};

std::unique_ptr<Kernel> create_split(const dlrt_plugin& p, const OpView& op) {
  return std::make_unique<PartsKernel>(p, op, false);
}

// ---- slice and slice_grad: small[i] <-> big[begin + i*stride] per dim -----------------------

// small (dense) <-> a strided window of big: big offset = base + sum_d i_d * step[d]. Gather
// (slice) reads big into small; scatter (slice_grad, pad's interior) writes small into big,
// after filling big with `fill` (0 for slice_grad, pad's value). The windows' positions are
// distinct, so both directions split over threads.
class WindowKernel : public LoopKernel {
 public:
  WindowKernel(const dlrt_plugin& p, const Dims& small, const Dims& big, const Dims& begin,
               const Dims& strides, int32_t dtype, bool scatter, double fill)
      : LoopKernel(p),
        esize_(plugin::dtype_size(dtype)),
        dtype_(dtype),
        scatter_(scatter),
        fill_(fill),
        big_numel_(plugin::product(big)) {
    const Dims bs = plugin::row_major_strides(big);
    Dims step(big.size());
    for (size_t d = 0; d < big.size(); ++d) {
      base_ += begin[d] * bs[d];
      step[d] = strides[d] * bs[d];
    }
    walk_ = make_walk<1>(small, {step});
  }

  void execute(const dlrt_kernel_args& args) override {
    if (scatter_) fill_big(args.outputs[0]);
    with_bytes(esize_, [&](auto t) {
      using U = decltype(t);
      const U* src = static_cast<const U*>(args.inputs[0]);
      U* dst = static_cast<U*>(args.outputs[0]);
      const int64_t s = walk_.inner_stride(0);
      parallel_for(walk_.numel, kGrainCheap, threads_, [&](int64_t b, int64_t e) {
        for_each_segment(walk_, b, e, [&](int64_t i, const int64_t* off, int64_t len) {
          const int64_t at = base_ + off[0];
          if (!scatter_) {
            if (s == 1) std::memcpy(dst + i, src + at, static_cast<size_t>(len) * sizeof(U));
            else
              for (int64_t j = 0; j < len; ++j) dst[i + j] = src[at + j * s];
          } else {
            if (s == 1) std::memcpy(dst + at, src + i, static_cast<size_t>(len) * sizeof(U));
            else
              for (int64_t j = 0; j < len; ++j) dst[at + j * s] = src[i + j];
          }
        });
      });
    });
  }

 private:
  void fill_big(void* big) {
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      T* b = static_cast<T*>(big);
      const T v = static_cast<T>(fill_);
      parallel_for(big_numel_, kGrainCheap, threads_,
                   [&](int64_t lo, int64_t hi) { std::fill(b + lo, b + hi, v); });
    });
  }

  size_t esize_;
  int32_t dtype_;
  bool scatter_;
  double fill_;
  int64_t big_numel_;
  int64_t base_ = 0;
  Walk<1> walk_;
};

std::unique_ptr<Kernel> create_slice(const dlrt_plugin& p, const OpView& op) {
  return std::make_unique<WindowKernel>(p, op.output(0).dims, op.input(0).dims,
                                        op.get_ints("begin"), op.get_ints("strides"),
                                        op.input(0).dtype, false, 0.0);
}

std::unique_ptr<Kernel> create_slice_grad(const dlrt_plugin& p, const OpView& op) {
  return std::make_unique<WindowKernel>(p, op.input(0).dims, op.output(0).dims,
                                        op.get_ints("begin"), op.get_ints("strides"),
                                        op.input(0).dtype, true, 0.0);
}

// ---- pad and pad_grad ----------------------------------------------------------------------

// The x index that padded index q reads in reflect mode (numpy "reflect": the edge is not
// repeated); valid for pads <= n - 1, which the checks guarantee.
inline int64_t reflect_index(int64_t q, int64_t before, int64_t n) {
  int64_t i = q - before;
  if (i < 0) i = -i;
  if (i >= n) i = 2 * (n - 1) - i;
  return i;
}

// Rows of the padded tensor `big` (all dims but the last) and the row of the unpadded `small`
// each reads in reflect mode.
struct ReflectRows {
  Dims small, big, pads;
  int64_t rows = 1, small_w = 1, big_w = 1, before = 0;

  ReflectRows(const Dims& s, const Dims& b, const Dims& p) : small(s), big(b), pads(p) {
    const size_t r = s.size();
    for (size_t d = 0; d + 1 < r; ++d) rows *= b[d];
    small_w = s[r - 1];
    big_w = b[r - 1];
    before = p[r - 1];
  }
  // The row of `small` that row `row` of `big` reads.
  int64_t source_row(int64_t row) const {
    const size_t r = small.size();
    int64_t src = 0, stride = 1;
    for (size_t d = r - 1; d-- > 0;) {
      const int64_t q = row % big[d];
      row /= big[d];
      src += reflect_index(q, pads[d], small[d]) * stride;
      stride *= small[d];
    }
    return src;
  }
};

// x -> y, reflect: each y row is the mirrored x row, its interior one memcpy.
class ReflectPadKernel : public LoopKernel {
 public:
  ReflectPadKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        g_(op.input(0).dims, op.output(0).dims, op.get_ints("pads")),
        dtype_(op.input(0).dtype) {}

  void execute(const dlrt_kernel_args& args) override {
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const T* x = static_cast<const T*>(args.inputs[0]);
      T* y = static_cast<T*>(args.outputs[0]);
      const int64_t grain = std::max<int64_t>(1, kGrainCheap / g_.big_w);
      parallel_for(g_.rows, grain, threads_, [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          const T* xs = x + g_.source_row(row) * g_.small_w;
          T* ys = y + row * g_.big_w;
          for (int64_t j = 0; j < g_.before; ++j) ys[j] = xs[g_.before - j];
          std::memcpy(ys + g_.before, xs, static_cast<size_t>(g_.small_w) * sizeof(T));
          for (int64_t j = g_.before + g_.small_w; j < g_.big_w; ++j)
            ys[j] = xs[reflect_index(j, g_.before, g_.small_w)];
        }
      });
    });
  }

 private:
  ReflectRows g_;
  int32_t dtype_;
};

// dy -> dx: dx = 0, then every dy cell added onto the x cell it mirrors (one thread: several
// dy rows land on one dx row).
class PadGradKernel : public LoopKernel {
 public:
  PadGradKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        g_(op.output(0).dims, op.input(0).dims, op.get_ints("pads")),
        dtype_(op.input(0).dtype),
        dx_numel_(op.output(0).numel) {}

  void execute(const dlrt_kernel_args& args) override {
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const T* dy = static_cast<const T*>(args.inputs[0]);
      T* dx = static_cast<T*>(args.outputs[0]);
      std::fill(dx, dx + dx_numel_, T(0));
      for (int64_t row = 0; row < g_.rows; ++row) {
        T* xs = dx + g_.source_row(row) * g_.small_w;
        const T* ys = dy + row * g_.big_w;
        for (int64_t j = 0; j < g_.big_w; ++j) xs[reflect_index(j, g_.before, g_.small_w)] += ys[j];
      }
    });
  }

 private:
  ReflectRows g_;
  int32_t dtype_;
  int64_t dx_numel_;
};

std::unique_ptr<Kernel> create_pad(const dlrt_plugin& p, const OpView& op) {
  if (op.get_string("mode") == "reflect") return std::make_unique<ReflectPadKernel>(p, op);
  // Constant mode: y filled with value, x scattered into the window that starts at the pads.
  const auto& pads = op.get_ints("pads");
  const Dims& x = op.input(0).dims;
  Dims begin(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(x.size()));
  return std::make_unique<WindowKernel>(p, x, op.output(0).dims, begin, Dims(x.size(), 1),
                                        op.input(0).dtype, true, op.get_float("value"));
}

// Data movement: any dtype, nothing to refuse. The float ops: f32 and f64.
void check_moving(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  fill_cost(op, 0, cost);
}
void check_float_op(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(0));
  fill_cost(op, 1, cost);
}

}  // namespace

std::unique_ptr<Kernel> make_concat_loop(const dlrt_plugin& p, const OpView& op) {
  return std::make_unique<PartsKernel>(p, op, true);
}

DLRT_CPU_KERNELS(t) {
  t.push_back({"split", check_moving, create_split});
  t.push_back({"slice", check_moving, create_slice});
  t.push_back({"slice_grad", check_float_op, create_slice_grad});
  t.push_back({"pad", check_float_op, create_pad});
  t.push_back({"pad_grad", check_float_op, make<PadGradKernel>});
}

}  // namespace dlrt::cpu::loops
