// loop_compare.cc: the cpu plugin's comparisons (equal, not_equal, less, less_equal, greater,
// greater_equal: a, b broadcast -> c BOOL, one byte 1 or 0 per element) and where(cond, x, y)
// (cond BOOL, cond/x/y broadcast together). Comparisons of f32, f64 and the integers, each in
// its own type; where of any dtype (it moves elements of the dtype's size).
//
// Both run on the broadcasting Walk of add (loop_util.hpp): the output is dense and each
// operand is read at its broadcast strides. The comparisons write bytes from float operands,
// which oneDNN's binary primitive could do for f32 only; one loop keeps f64 and the byte
// output in one place. Every output element reads only its own input elements.
#include "loop_util.hpp"

namespace dlrt::cpu::loops {
namespace {

enum class Cmp { kEq, kNe, kLt, kLe, kGt, kGe };

Cmp cmp_of(const std::string& name) {
  return name == "equal"        ? Cmp::kEq
         : name == "not_equal"  ? Cmp::kNe
         : name == "less"       ? Cmp::kLt
         : name == "less_equal" ? Cmp::kLe
         : name == "greater"    ? Cmp::kGt
                                : Cmp::kGe;
}

void check_comparison(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_numeric(op, op.input(0));
  fill_cost(op, 1, cost);
}

template <Cmp C, typename T>
uint8_t compare(T x, T y) {
  if constexpr (C == Cmp::kEq) return x == y;
  else if constexpr (C == Cmp::kNe) return x != y;
  else if constexpr (C == Cmp::kLt) return x < y;
  else if constexpr (C == Cmp::kLe) return x <= y;
  else if constexpr (C == Cmp::kGt) return x > y;
  else return x >= y;
}

// a: A, b: B -> c: broadcast(A, B) of bytes
class ComparisonKernel : public LoopKernel {
 public:
  ComparisonKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), cmp_(cmp_of(op.name())), dtype_(op.input(0).dtype) {
    const auto& dims = op.output(0).dims;
    walk_ = make_walk<2>(dims, {plugin::broadcast_strides(op.input(0).dims, dims, op.name()),
                                plugin::broadcast_strides(op.input(1).dims, dims, op.name())});
  }

  void execute(const dlrt_kernel_args& args) override {
    with_numeric(dtype_, [&](auto t) {
      using T = decltype(t);
      switch (cmp_) {
        case Cmp::kEq:
          return run<Cmp::kEq, T>(args);
        case Cmp::kNe:
          return run<Cmp::kNe, T>(args);
        case Cmp::kLt:
          return run<Cmp::kLt, T>(args);
        case Cmp::kLe:
          return run<Cmp::kLe, T>(args);
        case Cmp::kGt:
          return run<Cmp::kGt, T>(args);
        case Cmp::kGe:
          return run<Cmp::kGe, T>(args);
      }
    });
  }

 private:
  template <Cmp C, typename T>
  void run(const dlrt_kernel_args& args) {
    const T* a = static_cast<const T*>(args.inputs[0]);
    const T* b = static_cast<const T*>(args.inputs[1]);
    uint8_t* c = static_cast<uint8_t*>(args.outputs[0]);
    const int64_t sa = walk_.inner_stride(0), sb = walk_.inner_stride(1);
    parallel_for(walk_.numel, kGrainCheap, threads_, [&](int64_t begin, int64_t end) {
      for_each_segment(walk_, begin, end, [&](int64_t i, const int64_t* off, int64_t len) {
        const T* x = a + off[0];
        const T* y = b + off[1];
        for (int64_t j = 0; j < len; ++j) c[i + j] = compare<C>(x[j * sa], y[j * sb]);
      });
    });
  }

  Cmp cmp_;
  int32_t dtype_;
  Walk<2> walk_;
};

void check_where(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  fill_cost(op, 1, cost);
}

// cond: C (bytes, non-zero is true), x: X, y: Y -> z: broadcast(C, X, Y) = cond ? x : y
class WhereKernel : public LoopKernel {
 public:
  WhereKernel(const dlrt_plugin& p, const OpView& op) : LoopKernel(p), dtype_(op.input(1).dtype) {
    const auto& dims = op.output(0).dims;
    walk_ = make_walk<3>(dims, {plugin::broadcast_strides(op.input(0).dims, dims, op.name()),
                                plugin::broadcast_strides(op.input(1).dims, dims, op.name()),
                                plugin::broadcast_strides(op.input(2).dims, dims, op.name())});
  }

  void execute(const dlrt_kernel_args& args) override {
    with_element_size(dtype_, [&](auto t) {
      using T = decltype(t);
      const uint8_t* cond = static_cast<const uint8_t*>(args.inputs[0]);
      const T* x = static_cast<const T*>(args.inputs[1]);
      const T* y = static_cast<const T*>(args.inputs[2]);
      T* z = static_cast<T*>(args.outputs[0]);
      const int64_t sc = walk_.inner_stride(0), sx = walk_.inner_stride(1),
                    sy = walk_.inner_stride(2);
      parallel_for(walk_.numel, kGrainCheap, threads_, [&](int64_t begin, int64_t end) {
        for_each_segment(walk_, begin, end, [&](int64_t i, const int64_t* off, int64_t len) {
          for (int64_t j = 0; j < len; ++j)
            z[i + j] = cond[off[0] + j * sc] != 0 ? x[off[1] + j * sx] : y[off[2] + j * sy];
        });
      });
    });
  }

 private:
  int32_t dtype_;
  Walk<3> walk_;
};

}  // namespace

DLRT_CPU_KERNELS(t) {
  for (const char* name : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})
    t.push_back({name, check_comparison, make<ComparisonKernel>});
  t.push_back({"where", check_where, make<WhereKernel>});
}

}  // namespace dlrt::cpu::loops
