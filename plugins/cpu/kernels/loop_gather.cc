// loop_gather.cc: the cpu plugin's loop kernels for gather (an embedding lookup, axis 0) and
// scatter_add (its transpose), core/ops/infer_gather.cc. oneDNN has no gather primitive.
//
//   gather       one memcpy per id, parallel over ids (rows are bytes: any params dtype)
//   scatter_add  f32, deterministic: a stable counting sort of the positions by id (one
//                thread, O(ids + rows)), then parallel over output rows, each row the sum of
//                its updates rows in index order. Every cell is summed by one thread in the
//                same order on every run, whatever the thread count.
//
// An id outside [0, R) is INVALID_ARGUMENT naming it, its flat position and R; every id is
// checked (serially, before any parallel region: an exception must not leave one) before
// anything is written.
#include <string>

#include "loop_util.hpp"

namespace dlrt::cpu::loops {
namespace {

template <typename I>
void check_ids(const std::string& op, const I* ids, int64_t n, int64_t rows) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = static_cast<int64_t>(ids[i]);
    if (r < 0 || r >= rows)
      plugin::fail(DLRT_INVALID_ARGUMENT,
                   op + ": indices[" + std::to_string(i) + "] (flat) is " + std::to_string(r) +
                       ", outside [0, " + std::to_string(rows) + ") (the number of rows)");
  }
}

void check_gather(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  fill_cost(op, 1, cost);
}

// params: (R, D...), indices: (I...) -> y: (I..., D...); y[i] = params[indices[i]]
class GatherKernel : public LoopKernel {
 public:
  GatherKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        name_(op.name()),
        index_dtype_(op.input(1).dtype),
        rows_(op.input(0).dims[0]),
        n_(op.input(1).numel),
        row_bytes_(op.input(0).bytes / static_cast<size_t>(op.input(0).dims[0])) {}

  void execute(const dlrt_kernel_args& args) override {
    with_index(index_dtype_, [&](auto t) {
      using I = decltype(t);
      const auto* src = static_cast<const unsigned char*>(args.inputs[0]);
      const I* idx = static_cast<const I*>(args.inputs[1]);
      auto* dst = static_cast<unsigned char*>(args.outputs[0]);
      check_ids(name_, idx, n_, rows_);
      const int64_t grain =
          std::max<int64_t>(1, kGrainCheap * 8 / static_cast<int64_t>(row_bytes_));
      parallel_for(n_, grain, threads_, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          std::memcpy(dst + i * row_bytes_, src + static_cast<int64_t>(idx[i]) * row_bytes_,
                      row_bytes_);
      });
    });
  }

 private:
  std::string name_;
  int32_t index_dtype_;
  int64_t rows_, n_;
  size_t row_bytes_;
};

void check_scatter_add(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  if (op.input(1).dtype != DLRT_F32)
    unimplemented(op, std::string("updates: supports f32, got ") +
                          plugin::dtype_name(op.input(1).dtype));
  fill_cost(op, 1, cost);
}

// indices: (I...), updates: (I..., D...) -> out: (R, D...); out[r] = sum over i in index
// order of updates[i] with indices[i] == r
class ScatterAddKernel : public LoopKernel {
 public:
  ScatterAddKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        name_(op.name()),
        index_dtype_(op.input(0).dtype),
        rows_(op.output(0).dims[0]),
        n_(op.input(0).numel),
        d_(op.output(0).numel / op.output(0).dims[0]) {}

  void execute(const dlrt_kernel_args& args) override {
    with_index(index_dtype_, [&](auto t) {
      using I = decltype(t);
      const I* idx = static_cast<const I*>(args.inputs[0]);
      const float* u = static_cast<const float*>(args.inputs[1]);
      float* out = static_cast<float*>(args.outputs[0]);
      check_ids(name_, idx, n_, rows_);
      // start[r]..start[r+1]: the positions of id r in `order`, ascending (a stable sort).
      std::vector<int64_t> start(static_cast<size_t>(rows_ + 1), 0);
      std::vector<int64_t> order(static_cast<size_t>(n_));
      for (int64_t i = 0; i < n_; ++i) ++start[size_t(idx[i]) + 1];
      for (int64_t r = 0; r < rows_; ++r) start[size_t(r + 1)] += start[size_t(r)];
      std::vector<int64_t> next(start.begin(), start.end() - 1);
      for (int64_t i = 0; i < n_; ++i) order[size_t(next[size_t(idx[i])]++)] = i;
      const int64_t d = d_;
      const int64_t grain = std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, d));
      parallel_for(rows_, grain, threads_, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          float* o = out + r * d;
          for (int64_t k = 0; k < d; ++k) o[k] = 0.0f;
          for (int64_t j = start[size_t(r)]; j < start[size_t(r + 1)]; ++j) {
            const float* src = u + order[size_t(j)] * d;
            for (int64_t k = 0; k < d; ++k) o[k] += src[k];
          }
        }
      });
    });
  }

 private:
  std::string name_;
  int32_t index_dtype_;
  int64_t rows_, n_, d_;
};

}  // namespace

DLRT_CPU_KERNELS(t) {
  t.push_back({"gather", check_gather, make<GatherKernel>});
  t.push_back({"scatter_add", check_scatter_add, make<ScatterAddKernel>});
}

}  // namespace dlrt::cpu::loops
