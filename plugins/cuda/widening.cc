// widening.cc: see widening.hpp.
#include "widening.hpp"

#include <algorithm>
#include <cstring>

#include "op_support.hpp"

namespace dlrt::cuda {

namespace {

bool is_narrow(int64_t dtype) { return dtype == DLRT_F16 || dtype == DLRT_BF16; }

int64_t numel(const dlrt_tensor_desc& t) {
  int64_t n = 1;
  for (int d = 0; d < t.rank; ++d) n *= t.dims[d];
  return n;
}

// One operand: its host dtype, element count and, for a 16-bit one, its f32 buffer's offset.
struct Operand {
  int32_t dtype = DLRT_F32;
  int64_t numel = 0;
  size_t offset = 0;
};

class WideningKernel : public Kernel {
 public:
  WideningKernel(const dlrt_op_desc& narrow, std::unique_ptr<Kernel> inner, size_t inner_ws)
      : inner_(std::move(inner)), inner_ws_(inner_ws) {
    WorkspacePlan plan;
    plan.add(inner_ws);  // the inner kernel's workspace first, at offset 0
    auto lay_out = [&](const dlrt_tensor_desc& t) {
      Operand o{t.dtype, numel(t), 0};
      if (is_narrow(t.dtype)) o.offset = plan.add(static_cast<size_t>(o.numel) * sizeof(float));
      return o;
    };
    for (size_t i = 0; i < narrow.num_inputs; ++i) inputs_.push_back(lay_out(*narrow.inputs[i]));
    for (size_t i = 0; i < narrow.num_outputs; ++i) outputs_.push_back(lay_out(*narrow.outputs[i]));
    total_ = plan.bytes;
    in_.resize(inputs_.size());
    out_.resize(outputs_.size());
  }
  size_t workspace_bytes() const { return total_; }

  void run(cudaStream_t stream, const dlrt_kernel_args& args) override {
    std::vector<const void*>& in = in_;  // sized in the constructor: nothing allocated here
    std::vector<void*>& out = out_;
    std::copy(args.inputs, args.inputs + args.num_inputs, in.begin());
    std::copy(args.outputs, args.outputs + args.num_outputs, out.begin());
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (!is_narrow(inputs_[i].dtype)) continue;
      auto* wide = static_cast<float*>(at(args.workspace, inputs_[i].offset));
      launch_widen(stream, args.inputs[i], inputs_[i].dtype, wide, inputs_[i].numel);
      in[i] = wide;
    }
    for (size_t o = 0; o < outputs_.size(); ++o) {
      if (!is_narrow(outputs_[o].dtype)) continue;
      out[o] = at(args.workspace, outputs_[o].offset);
      for (size_t i = 0; i < inputs_.size(); ++i)  // in place: where the input was widened
        if (is_narrow(inputs_[i].dtype) && args.inputs[i] == args.outputs[o])
          out[o] = const_cast<void*>(in[i]);
    }
    dlrt_kernel_args a = args;
    a.inputs = in.data();
    a.outputs = out.data();
    a.workspace = inner_ws_ > 0 ? args.workspace : nullptr;
    a.workspace_bytes = inner_ws_;
    inner_->run(stream, a);
    for (size_t o = 0; o < outputs_.size(); ++o)
      if (is_narrow(outputs_[o].dtype))
        launch_narrow(stream, static_cast<const float*>(out[o]), outputs_[o].dtype, args.outputs[o],
                      outputs_[o].numel);
  }

 private:
  std::unique_ptr<Kernel> inner_;
  size_t inner_ws_ = 0, total_ = 0;
  std::vector<Operand> inputs_, outputs_;
  std::vector<const void*> in_;  // the inner kernel's operands of one run (reused)
  std::vector<void*> out_;
};

}  // namespace

WideDesc::WideDesc(const dlrt_op_desc& narrow) : op_(narrow.op != nullptr ? narrow.op : "") {
  auto widen = [](const dlrt_tensor_desc* t) {
    dlrt_tensor_desc d = *t;
    if (is_narrow(d.dtype)) d.dtype = DLRT_F32;
    return d;
  };
  for (size_t i = 0; i < narrow.num_inputs; ++i) inputs_.push_back(widen(narrow.inputs[i]));
  for (size_t i = 0; i < narrow.num_outputs; ++i) outputs_.push_back(widen(narrow.outputs[i]));
  for (size_t i = 0; i < narrow.num_attrs; ++i) {
    dlrt_attr a = *narrow.attrs[i];  // names and arrays stay the caller's: read during create
    if (a.type == DLRT_ATTR_DTYPE && is_narrow(a.i)) a.i = DLRT_F32;
    attrs_.push_back(a);
  }
  for (const auto& t : inputs_) input_ptrs_.push_back(&t);
  for (const auto& t : outputs_) output_ptrs_.push_back(&t);
  for (const auto& a : attrs_) attr_ptrs_.push_back(&a);
  std::memcpy(&desc_, &narrow, std::min(narrow.struct_size, sizeof desc_));
  desc_.struct_size = std::min(narrow.struct_size, sizeof desc_);
  desc_.op = op_.c_str();
  desc_.inputs = input_ptrs_.data();
  desc_.outputs = output_ptrs_.data();
  desc_.attrs = attr_ptrs_.data();
}

bool has_narrow_operand(const dlrt_op_desc& op) {
  for (size_t i = 0; i < op.num_inputs; ++i)
    if (op.inputs[i] != nullptr && is_narrow(op.inputs[i]->dtype)) return true;
  for (size_t i = 0; i < op.num_outputs; ++i)
    if (op.outputs[i] != nullptr && is_narrow(op.outputs[i]->dtype)) return true;
  return false;
}

std::unique_ptr<Kernel> make_widening_kernel(const dlrt_op_desc& narrow,
                                             std::unique_ptr<Kernel> inner, size_t inner_workspace,
                                             size_t* workspace_bytes) {
  auto k = std::make_unique<WideningKernel>(narrow, std::move(inner), inner_workspace);
  *workspace_bytes = k->workspace_bytes();
  return k;
}

}  // namespace dlrt::cuda
