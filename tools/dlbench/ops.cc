// ops.cc: `dlbench ops`, micro-benchmarks of the reference workload's ops at its exact shapes
// (batch 64), forward and backward, as the graph of one training step runs them.
//
// Each case is one or more eager dlrt_op_run calls with every input and output tensor made
// beforehand (outputs preallocated, in-place updates given their own inputs), so a sample
// times what the kernel costs plus the eager path's fixed overhead (op validation, the kernel
// cache lookup): the `eager.copy_1` case measures that overhead alone. One untimed run first
// creates the kernel (cache warm), then `repeat` timed samples; JSON per case: median and min
// microseconds, GFLOP/s and the fraction of the device's peak_gflops (from the median), and
// GB/s of operand traffic for the memory-bound ops.
//
// `step_ms` adds the medians of the cases marked in_step (`step_ms_from_min` their minimums): the op time of one training step
// (an upper bound for the executor, which skips the eager overhead; a lower bound for what a
// step costs in memory traffic between ops, which isolated runs keep in cache).
#include <cstring>
#include <random>
#include <stdexcept>

#include "bench.hpp"

namespace dlbench {
namespace {

enum class Fill { kUniform, kLabels, kStep, kPositive };

struct Operand {
  dlrt_dtype dtype;
  std::vector<int64_t> dims;
  Fill fill = Fill::kUniform;
};

struct Call {
  std::string op;
  std::vector<Operand> inputs;
  dlrt::OpAttrs attrs;
  std::vector<int> in_place;  // output i is input in_place[i] (optimizer updates); empty: none
};

struct Case {
  Case(std::string name_, std::vector<Call> calls_, double flops_, bool in_step_ = true,
       std::string note_ = "")
      : name(std::move(name_)),
        calls(std::move(calls_)),
        flops(flops_),
        in_step(in_step_),
        note(std::move(note_)) {}
  std::string name;  // "conv2.backward_filter"
  std::vector<Call> calls;
  double flops = 0;     // per sample (all calls)
  bool in_step = true;  // one training step runs it
  std::string note;
};

Operand f32(std::vector<int64_t> dims, Fill fill = Fill::kUniform) {
  return {DLRT_F32, std::move(dims), fill};
}

// One conv layer of the workload: x (64,H,W,Ci) -> y (64,H-2,W-2,Co), 3x3 VALID, bias + relu.
void add_conv(std::vector<Case>& cases, const std::string& layer, int64_t h, int64_t ci, int64_t co,
              bool needs_dx) {
  const int64_t n = workload::kBatch, oh = h - 2;
  const double flops = 2.0 * n * oh * oh * co * 9 * ci;
  const Operand x = f32({n, h, h, ci}), w = f32({3, 3, ci, co}), y = f32({n, oh, oh, co});
  cases.push_back({layer + ".forward",
                   {{"conv2d_bias_act", {x, w, f32({co})}, {{"activation", "relu"}}, {}}},
                   flops});
  cases.push_back({layer + ".forward_nobias",
                   {{"conv2d", {x, w}, {}, {}}},
                   flops,
                   false,
                   "conv2d without the fused bias+relu, for comparison"});
  cases.push_back({layer + ".relu_grad", {{"relu_grad", {y, y}, {}, {}}}, 0});
  cases.push_back({layer + ".bias_add_grad", {{"bias_add_grad", {y}, {}, {}}}, 0});
  cases.push_back({layer + ".backward_filter",
                   {{"conv2d_backward_filter",
                     {x, y},
                     {{"filter_shape", std::vector<int64_t>{3, 3, ci, co}}},
                     {}}},
                   flops});
  Case bd{
      layer + ".backward_data",
      {{"conv2d_backward_data", {y, w}, {{"input_shape", std::vector<int64_t>{n, h, h, ci}}}, {}}},
      flops,
      needs_dx};
  if (!needs_dx) bd.note = "not part of training: the image needs no gradient";
  cases.push_back(bd);
}

// One of ResNet-20's 3x3 convolutions (samples/resnet, batch 128): x (128,H,H,C) -> y
// (128,H,H,C), SAME, stride 1; the three passes of training. Not part of the reference CNN's
// step: they show where the convolution kernels (oneDNN direct, dlrt's or oneDNN's Winograd)
// stand at ResNet's thin channel counts, 16 to 64.
void add_resnet_conv(std::vector<Case>& cases, const std::string& layer, int64_t h, int64_t c) {
  constexpr int64_t n = 128;
  const double flops = 2.0 * n * h * h * c * 9 * c;
  const Operand x = f32({n, h, h, c}), w = f32({3, 3, c, c});
  const dlrt::OpAttrs same = {{"padding", "SAME"}};
  const dlrt::OpAttrs filter = {{"padding", "SAME"},
                                {"filter_shape", std::vector<int64_t>{3, 3, c, c}}};
  const dlrt::OpAttrs data = {{"padding", "SAME"},
                              {"input_shape", std::vector<int64_t>{n, h, h, c}}};
  const std::string note = "ResNet-20 at batch 128";
  cases.push_back({layer + ".forward", {{"conv2d", {x, w}, same, {}}}, flops, false, note});
  cases.push_back({layer + ".backward_filter",
                   {{"conv2d_backward_filter", {x, x}, filter, {}}},
                   flops,
                   false,
                   note});
  cases.push_back(
      {layer + ".backward_data", {{"conv2d_backward_data", {x, w}, data, {}}}, flops, false, note});
  // A residual block's input: the pass started from the shortcut's gradient, and the pass
  // and the add it replaces.
  cases.push_back({layer + ".backward_data_add",
                   {{"conv2d_backward_data_add", {x, w, x}, data, {}}},
                   flops,
                   false,
                   note});
  cases.push_back({layer + ".backward_both",
                   {{"conv2d_backward", {x, x, w}, same, {}}},
                   2 * flops,
                   false,
                   note + "; dx and dw of one conv (conv2d_backward), flops of both"});
  cases.push_back({layer + ".backward_data_add_unfused",
                   {{"conv2d_backward_data", {x, w}, data, {}}, {"add", {x, x}, {}, {}}},
                   flops,
                   false,
                   note});
}

// ResNet-20's batch norms at batch 128 (memory-bound: compare the GB/s with the machine's):
// the training pass with and without the fused ReLU, the residual tail (with the add and
// ReLU fused, and as the three ops it replaces), and the backward ops.
void add_resnet_batch_norm(std::vector<Case>& cases, const std::string& layer, int64_t h,
                           int64_t c) {
  constexpr int64_t n = 128;
  const Operand x = f32({n, h, h, c}), v = f32({c}), pos = f32({c}, Fill::kPositive);
  const std::string note = "ResNet-20 at batch 128";
  cases.push_back(
      {layer + ".train", {{"batch_norm_train", {x, v, v, v, pos}, {}, {}}}, 0, false, note});
  cases.push_back({layer + ".train_relu",
                   {{"batch_norm_train", {x, v, v, v, pos}, {{"activation", "relu"}}, {}}},
                   0,
                   false,
                   note});
  cases.push_back(
      {layer + ".grad", {{"batch_norm_grad", {x, x, v, v, pos}, {}, {}}}, 0, false, note});
  cases.push_back({layer + ".relu_grad",
                   {{"batch_norm_relu_grad", {x, x, v, v, v, pos}, {}, {}}},
                   0,
                   false,
                   note});
  cases.push_back({layer + ".train_add_relu",
                   {{"batch_norm_add_relu_train", {x, x, v, v, v, pos}, {}, {}}},
                   0,
                   false,
                   note});
  cases.push_back({layer + ".train_add_relu_unfused",
                   {{"batch_norm_train", {x, v, v, v, pos}, {}, {}},
                    {"add", {x, x}, {}, {}},
                    {"relu", {x}, {}, {}}},
                   0,
                   false,
                   note});
  cases.push_back({layer + ".add_relu_grad",
                   {{"batch_norm_add_relu_grad", {x, x, x, v, v, pos}, {}, {}}},
                   0,
                   false,
                   note});
}

void add_pool(std::vector<Case>& cases, const std::string& layer, int64_t h, int64_t c) {
  const int64_t n = workload::kBatch, oh = h / 2;
  const Operand x = f32({n, h, h, c}), dy = f32({n, oh, oh, c});
  cases.push_back({layer + ".forward", {{"max_pool2d", {x}, {}, {}}}, 4.0 * n * oh * oh * c});
  cases.push_back(
      {layer + ".backward", {{"max_pool2d_backward", {x, dy}, {}, {}}}, 4.0 * n * oh * oh * c});
  // What the training step runs for the conv before the pool (conv2d_bias_act relu): the
  // pool's backward, relu_grad and bias_add_grad in one op, and the three ops it replaces.
  cases.push_back({layer + ".backward_relu_bias",
                   {{"max_pool2d_backward_relu_bias", {x, dy}, {}, {}}},
                   4.0 * n * oh * oh * c,
                   false});
  cases.push_back({layer + ".backward_relu_bias_unfused",
                   {{"max_pool2d_backward", {x, dy}, {}, {}},
                    {"relu_grad", {x, x}, {}, {}},
                    {"bias_add_grad", {x}, {}, {}}},
                   4.0 * n * oh * oh * c,
                   false});
}

// The reference CNN's conv and pool passes under mixed_bfloat16 (every operand bf16, as the
// policy's step runs them): beside the f32 cases of the same run, what 16-bit storage saves or
// costs per op. Not part of the f32 step.
void add_bf16(std::vector<Case>& cases) {
  const int64_t n = workload::kBatch;
  auto bf16 = [](std::vector<int64_t> dims) { return Operand{DLRT_BF16, std::move(dims)}; };
  const std::string note = "mixed precision: every operand bf16";
  const Operand x1 = bf16({n, 28, 28, 1}), w1 = bf16({3, 3, 1, 32}), y1 = bf16({n, 26, 26, 32});
  const double flops1 = 2.0 * n * 26 * 26 * 32 * 9;
  cases.push_back({"conv1.forward.bf16",
                   {{"conv2d_bias_act", {x1, w1, bf16({32})}, {{"activation", "relu"}}, {}}},
                   flops1, false, note});
  cases.push_back({"conv1.backward_filter.bf16",
                   {{"conv2d_backward_filter",
                     {x1, y1},
                     {{"filter_shape", std::vector<int64_t>{3, 3, 1, 32}}},
                     {}}},
                   flops1, false, note});
  cases.push_back({"pool1.forward.bf16", {{"max_pool2d", {y1}, {}, {}}}, 0, false, note});
  cases.push_back({"pool1.backward_relu_bias.bf16",
                   {{"max_pool2d_backward_relu_bias", {y1, bf16({n, 13, 13, 32})}, {}, {}}},
                   0, false, note});
  const Operand x2 = bf16({n, 13, 13, 32}), w2 = bf16({3, 3, 32, 64}), y2 = bf16({n, 11, 11, 64});
  const double flops2 = 2.0 * n * 11 * 11 * 64 * 9 * 32;
  cases.push_back({"conv2.forward.bf16",
                   {{"conv2d_bias_act", {x2, w2, bf16({64})}, {{"activation", "relu"}}, {}}},
                   flops2, false, note});
  cases.push_back({"conv2.backward_both",
                   {{"conv2d_backward", {f32({n, 11, 11, 64}), f32({n, 13, 13, 32}),
                                         f32({3, 3, 32, 64})}, {}, {}}},
                   2 * flops2, false, "dx and dw of one conv (conv2d_backward), f32"});
  cases.push_back({"conv2.backward_both.bf16",
                   {{"conv2d_backward", {y2, x2, w2}, {}, {}}},
                   2 * flops2, false, note});
  // dense1 (576 -> 64) as the policy runs it: oneDNN's bf16 matmuls at the f32 cases' shapes.
  const Operand a = bf16({n, 576}), wd = bf16({576, 64}), dz = bf16({n, 64});
  const double flops_d = 2.0 * n * 576 * 64;
  cases.push_back({"dense1.forward.bf16",
                   {{"matmul_bias_act", {a, wd, bf16({64})}, {{"activation", "relu"}}, {}}},
                   flops_d,
                   false,
                   note});
  cases.push_back({"dense1.grad_a.bf16",
                   {{"matmul", {dz, wd}, {{"transpose_b", true}}, {}}},
                   flops_d,
                   false,
                   note});
  cases.push_back({"dense1.grad_w.bf16",
                   {{"matmul", {a, dz}, {{"transpose_a", true}}, {}}},
                   flops_d,
                   false,
                   note});
  // What the policy adds to every step: each f32 variable cast to bf16 for the forward and its
  // bf16 gradient cast back for the optimizer (the reference CNN's ten variables).
  Case casts{"mixed.weight_casts_x20",
             {},
             0,
             false,
             "the step's per-variable casts, f32 -> bf16 and back"};
  for (int64_t numel : {288, 32, 18432, 64, 36864, 64, 36864, 64, 640, 10}) {
    casts.calls.push_back({"cast", {f32({numel})}, {{"dtype", DLRT_BF16}}, {}});
    casts.calls.push_back({"cast", {bf16({numel})}, {{"dtype", DLRT_F32}}, {}});
  }
  cases.push_back(casts);
}

// Dense(k -> n): a (64,k) . w (k,n) + b, then its gradients as autodiff emits them.
void add_dense(std::vector<Case>& cases, const std::string& layer, int64_t k, int64_t n,
               const char* act) {
  const int64_t m = workload::kBatch;
  const double flops = 2.0 * m * k * n;
  const Operand a = f32({m, k}), w = f32({k, n}), dz = f32({m, n});
  cases.push_back({layer + ".forward",
                   {{"matmul_bias_act", {a, w, f32({n})}, {{"activation", act}}, {}}},
                   flops});
  if (std::string(act) == "relu")
    cases.push_back({layer + ".relu_grad", {{"relu_grad", {dz, dz}, {}, {}}}, 0});
  cases.push_back({layer + ".bias_add_grad", {{"bias_add_grad", {dz}, {}, {}}}, 0});
  // da = dz . w^T (64,k); dw = a^T . dz (k,n)
  cases.push_back({layer + ".grad_a", {{"matmul", {dz, w}, {{"transpose_b", true}}, {}}}, flops});
  cases.push_back({layer + ".grad_w", {{"matmul", {a, dz}, {{"transpose_a", true}}, {}}}, flops});
}

Call adam_call(int64_t numel) {
  const Operand p = f32({numel});
  return {"adam_update",
          // param, grad, m, v, step, learning_rate (an input since version 2; any positive value
          // times the same)
          {p, p, f32({numel}, Fill::kPositive), f32({numel}, Fill::kPositive), f32({}, Fill::kStep),
           f32({}, Fill::kPositive)},
          {},
          {0, 2, 3}};
}

// Scaled-dot-product attention at a small transformer's shapes (batch 32, 4 heads, T 128,
// head_dim 32, causal): the fused op, its backward, and the composed form a user would write
// (batch_matmul q.k^T, the scale, causal_mask, softmax, batch_matmul p.v); and one generated
// token (Tq = 1) against a 128-entry key/value cache. Not part of the conv workload's step.
// FLOPs count the products the causal mask keeps (half the square for Tq = Tk).
void add_attention(std::vector<Case>& cases) {
  const int64_t b = 32, h = 4, t = 128, d = 32;
  const Operand q = f32({b, h, t, d}), s = f32({b, h, t, t});
  const double pairs = double(b * h) * t * (t + 1) / 2;
  const double fwd = 2.0 * pairs * 2 * d;
  cases.push_back({"attention.causal_b32h4t128d32.fused",
                   {{"attention", {q, q, q}, {{"causal", 1}}, {}}},
                   fwd,
                   false,
                   "fused attention, causal, (32,4,128,32)"});
  cases.push_back({"attention.causal_b32h4t128d32.composed",
                   {{"batch_matmul", {q, q}, {{"transpose_b", true}}, {}},
                    {"mul", {s, f32({})}, {}, {}},
                    {"causal_mask", {s}, {}, {}},
                    {"softmax", {s}, {}, {}},
                    {"batch_matmul", {s, q}, {}, {}}},
                   fwd,
                   false,
                   "batch_matmul + mul + causal_mask + softmax + batch_matmul, same shapes"});
  cases.push_back({"attention.causal_b32h4t128d32.backward",
                   {{"attention_grad",
                     {q, q, q, q, q, f32({b, h, t}, Fill::kPositive)},
                     {{"causal", 1}},
                     {}}},
                   2.5 * fwd,
                   false,
                   "attention_grad (dq, dk, dv; P recomputed from lse)"});
  const Operand q1 = f32({b, h, 1, d});
  cases.push_back({"attention.kv_cache_tq1_tk128.fused",
                   {{"attention", {q1, q, q}, {{"causal", 1}}, {}}},
                   2.0 * double(b * h) * t * 2 * d,
                   false,
                   "one query row against 128 cached keys/values (generation)"});
}

std::vector<Case> workload_cases() {
  std::vector<Case> cases;
  cases.push_back({"eager.copy_1",
                   {{"copy", {f32({1})}, {}, {}}},
                   0,
                   false,
                   "one-element copy: the fixed cost of an eager dlrt_op_run call"});
  add_conv(cases, "conv1", 28, 1, 32, false);
  add_pool(cases, "pool1", 26, 32);
  add_conv(cases, "conv2", 13, 32, 64, true);
  add_pool(cases, "pool2", 11, 64);
  add_conv(cases, "conv3", 5, 64, 64, true);
  add_dense(cases, "dense1", 576, 64, "relu");
  add_dense(cases, "dense2", 64, 10, "none");
  cases.push_back({"loss.sparse_softmax_cross_entropy",
                   {{"sparse_softmax_cross_entropy",
                     {f32({workload::kBatch, 10}), {DLRT_I32, {workload::kBatch}, Fill::kLabels}},
                     {},
                     {}}},
                   0});
  // Adam: one update over every parameter (what a fused multi-tensor update would cost) and
  // the ten per-variable updates the executor runs today.
  cases.push_back({"adam_update.all_93322",
                   {adam_call(workload::kParams)},
                   0,
                   false,
                   "one update over all 93,322 parameters"});
  Case per_var{"adam_update.per_variable_x10",
               {},
               0,
               true,
               "ten updates, one per variable, as the executor runs"};
  for (int64_t numel : {288, 32, 18432, 64, 36864, 64, 36864, 64, 640, 10})
    per_var.calls.push_back(adam_call(numel));
  cases.push_back(per_var);
  // Reductions along axes that are not the last (memory-bound: compare their GB/s with the
  // machine's bandwidth). The rank-6 case is the gradient of a 2x nearest upsampling built from
  // broadcast_to: (N,H,2,W,2,C) summed over the two 2s.
  const int64_t n = workload::kBatch;
  cases.push_back(
      {"reduce_sum.rank6_upsample_grad",
       {{"reduce_sum", {f32({n, 14, 2, 14, 2, 32})}, {{"axes", std::vector<int64_t>{2, 4}}}, {}}},
       0,
       false,
       "(64,14,2,14,2,32) over axes 2 and 4"});
  cases.push_back(
      {"reduce_sum.columns",
       {{"reduce_sum", {f32({n * 26 * 26, 32})}, {{"axes", std::vector<int64_t>{0}}}, {}}},
       0,
       false,
       "(43264,32) over axis 0, a bias gradient's shape"});
  cases.push_back(
      {"reduce_mean.rows",
       {{"reduce_mean", {f32({n * 32, 26 * 26})}, {{"axes", std::vector<int64_t>{1}}}, {}}},
       0,
       false,
       "(2048,676) over axis 1, a global average pool's shape"});
  add_attention(cases);
  add_bf16(cases);
  add_resnet_conv(cases, "resnet20.conv16", 32, 16);
  add_resnet_conv(cases, "resnet20.conv32", 16, 32);
  add_resnet_conv(cases, "resnet20.conv64", 8, 64);
  add_resnet_batch_norm(cases, "resnet20.bn16", 28, 16);
  add_resnet_batch_norm(cases, "resnet20.bn32", 14, 32);
  add_resnet_batch_norm(cases, "resnet20.bn64", 7, 64);
  return cases;
}

// ---- running -------------------------------------------------------------------------------

void fill_host(const Operand& o, std::vector<unsigned char>& bytes, std::mt19937& rng) {
  size_t n = 1;
  for (int64_t d : o.dims) n *= static_cast<size_t>(d);
  if (o.dtype == DLRT_I32) {
    std::uniform_int_distribution<int32_t> label(0, 9);
    std::vector<int32_t> v(n);
    for (auto& x : v) x = label(rng);
    bytes.assign(reinterpret_cast<unsigned char*>(v.data()),
                 reinterpret_cast<unsigned char*>(v.data() + n));
    return;
  }
  std::uniform_real_distribution<float> u(o.fill == Fill::kPositive ? 0.0f : -1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = o.fill == Fill::kStep ? 1.0f : u(rng);
  if (o.dtype == DLRT_BF16) {  // each value rounded to bf16 (to nearest even; no NaN here)
    std::vector<uint16_t> h(n);
    for (size_t i = 0; i < n; ++i) {
      uint32_t b;
      std::memcpy(&b, &v[i], 4);
      h[i] = static_cast<uint16_t>((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
    }
    bytes.assign(reinterpret_cast<unsigned char*>(h.data()),
                 reinterpret_cast<unsigned char*>(h.data() + n));
    return;
  }
  bytes.assign(reinterpret_cast<unsigned char*>(v.data()),
               reinterpret_cast<unsigned char*>(v.data() + n));
}

// A call with its tensors made and its C arguments laid out, ready to run with no allocation.
struct PreparedCall {
  std::string op;
  std::vector<dlrt::Tensor> owned;
  std::vector<const dlrt_tensor*> inputs;
  std::vector<dlrt_tensor*> outputs;
  std::vector<dlrt_attr> attr_values;
  std::vector<const dlrt_attr*> attrs;
  dlrt::OpAttrs attr_storage;
  double bytes = 0;  // every operand once

  void run(dlrt_context* ctx, size_t device) {
    dlrt::check(dlrt_op_run(ctx, op.c_str(), device, inputs.data(), inputs.size(),
                            attrs.empty() ? nullptr : attrs.data(), attrs.size(), outputs.data(),
                            outputs.size()));
  }
};

std::unique_ptr<PreparedCall> prepare(const dlrt::Context& ctx, size_t device, const Call& call,
                                      std::mt19937& rng) {
  auto pc = std::make_unique<PreparedCall>();
  pc->op = call.op;
  pc->attr_storage = call.attrs;
  std::vector<dlrt_tensor_desc> in_descs;
  std::vector<unsigned char> host;
  for (const Operand& o : call.inputs) {
    dlrt::Tensor t = dlrt::Tensor::create(ctx, device, o.dtype, o.dims);
    fill_host(o, host, rng);
    dlrt::check(dlrt_tensor_write(t.get(), host.data(), host.size()));
    pc->bytes += static_cast<double>(t.byte_size());
    in_descs.push_back(t.desc());
    pc->inputs.push_back(t.get());
    pc->owned.push_back(std::move(t));
  }
  const std::vector<dlrt_tensor_desc> out_descs = ctx.op_infer(call.op, in_descs, call.attrs);
  for (size_t i = 0; i < out_descs.size(); ++i) {
    if (i < call.in_place.size()) {
      pc->outputs.push_back(
          const_cast<dlrt_tensor*>(pc->inputs.at(static_cast<size_t>(call.in_place[i]))));
      pc->bytes += static_cast<double>(dlrt_tensor_byte_size(pc->outputs.back()));
      continue;
    }
    const dlrt_tensor_desc& d = out_descs[i];
    dlrt::Tensor t = dlrt::Tensor::create(ctx, device, static_cast<dlrt_dtype>(d.dtype),
                                          std::vector<int64_t>(d.dims, d.dims + d.rank));
    pc->bytes += static_cast<double>(t.byte_size());
    pc->outputs.push_back(t.get());
    pc->owned.push_back(std::move(t));
  }
  for (const dlrt::OpAttr& a : pc->attr_storage) pc->attr_values.push_back(a.c());
  for (const dlrt_attr& a : pc->attr_values) pc->attrs.push_back(&a);
  return pc;
}

json shape_json(const Call& call) {
  json in = json::array();
  for (const Operand& o : call.inputs) in.push_back(o.dims);
  return in;
}

}  // namespace

json run_ops(const OpsOptions& options) {
  if (options.repeat < 1)
    throw std::runtime_error("--repeat must be at least 1, got " + std::to_string(options.repeat));
  dlrt::Context ctx = make_context(options.threads, options.plugin_options);
  const size_t device = find_device(ctx, options.device);
  const dlrt::DeviceInfo info = ctx.device(device);
  json doc;
  doc["mode"] = "ops";
  doc["device"] = device_json(info);
  doc["repeat"] = options.repeat;
  doc["batch"] = workload::kBatch;
  doc["load_average_before"] = load_average();

  std::mt19937 rng(2026);
  json results = json::array();
  double step_us = 0, step_min_us = 0;
  for (const Case& c : workload_cases()) {
    if (!options.filter.empty() && c.name.find(options.filter) == std::string::npos) continue;
    std::vector<std::unique_ptr<PreparedCall>> calls;
    double bytes = 0;
    for (const Call& call : c.calls) {
      calls.push_back(prepare(ctx, device, call, rng));
      bytes += calls.back()->bytes;
    }
    for (auto& pc : calls) pc->run(ctx.get(), device);  // creates and caches the kernels
    std::vector<double> samples;
    samples.reserve(static_cast<size_t>(options.repeat));
    for (int r = 0; r < options.repeat; ++r) {
      const double t0 = now_us();
      for (auto& pc : calls) pc->run(ctx.get(), device);
      samples.push_back(now_us() - t0);
    }
    const Stats s = stats_of(samples);
    json j;
    j["name"] = c.name;
    j["op"] = c.calls.front().op;
    if (c.calls.size() == 1) j["inputs"] = shape_json(c.calls.front());
    else j["calls"] = c.calls.size();
    j["median_us"] = s.median_us;
    j["min_us"] = s.min_us;
    j["flops"] = c.flops;
    j["bytes"] = bytes;
    if (c.flops > 0 && s.median_us > 0) {
      const double gflops = c.flops / (s.median_us * 1e3);
      j["gflops"] = gflops;
      j["peak_fraction"] = info.peak_gflops > 0 ? gflops / info.peak_gflops : 0.0;
    } else {
      j["gbytes_per_s"] = s.median_us > 0 ? bytes / (s.median_us * 1e3) : 0.0;
    }
    j["in_step"] = c.in_step;
    if (!c.note.empty()) j["note"] = c.note;
    if (c.in_step) step_us += s.median_us, step_min_us += s.min_us;
    results.push_back(j);
  }
  doc["ops"] = results;
  if (options.filter.empty()) {
    // One step's op time and what an epoch of 938 steps would take at that rate.
    const double steps =
        static_cast<double>((workload::kTrainSamples + workload::kBatch - 1) / workload::kBatch);
    doc["step_ms"] = step_us / 1e3;
    // The same from the fastest samples: on a shared machine, the closer to what the kernels cost.
    doc["step_ms_from_min"] = step_min_us / 1e3;
    doc["epoch_seconds_from_ops"] = step_us * steps / 1e6;
    doc["step_flops"] = workload::kTrainPerSample * workload::kBatch;
    doc["step_gflops"] =
        step_us > 0 ? workload::kTrainPerSample * workload::kBatch / (step_us * 1e3) : 0.0;
  }
  doc["load_average_after"] = load_average();
  return doc;
}

}  // namespace dlbench
