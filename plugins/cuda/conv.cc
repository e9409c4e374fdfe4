// conv.cc: conv2d, conv2d_bias_act, conv2d_backward_data(_add), conv2d_backward_filter and
// conv2d_backward (the last two passes' kernels one after the other) through cuDNN's legacy
// (v7-style) descriptor API. f32, NHWC or NCHW, any stride and dilation, VALID or SAME.
//
// Decisions:
//   - Filters. dlrt's filters are HWIO (KH,KW,Ci,Co) in both data formats; cuDNN wants KRSC
//     (Co,KH,KW,Ci) for NHWC and KCRS (Co,Ci,KH,KW) for NCHW. Every run transposes the filter
//     into the workspace with the strided-copy kernel (misc.cu) and, for the filter gradient,
//     transposes cuDNN's result back into the HWIO output. Filters are small (the reference
//     model's largest is 74 KB), so this costs one tiny launch, and keeps the op stateless.
//   - SAME padding. cuDNN pads both sides alike; TensorFlow puts the odd cell after. When
//     before != after on an axis, the image is grown by one zero row/column after it in the
//     workspace (pad kernel) and cuDNN pads `before` on both sides, which gives exactly TF's
//     output; the data gradient is computed at the grown size and cropped back.
//   - Algorithms. Chosen once in create by cudnnGet*Algorithm_v7 (heuristics, no benchmark),
//     by algo_choice.hpp's rule: deterministic algorithms only unless option deterministic=0,
//     no TF32, workspace within option cudnn_workspace_mb; logged at info.
//     Math is CUDNN_FMA_MATH: no TF32 tensor-core rounding, so f32 results meet the 1e-3
//     conformance tolerance by construction.
//   - Groups. dlrt's grouped filter is (KH,KW,Ci/G,Co), output channel o in group o / (Co/G);
//     cuDNN's grouped filter (cudnnSetConvolutionGroupCount) is the same filter with C = Ci/G,
//     K = Co and the groups as consecutive runs of Co/G output channels, in KRSC or KCRS. So
//     the transpose above is the one of a (KH,KW,Ci/G,Co) tensor and nothing else changes;
//     the image descriptors keep all Ci channels.
//   - conv2d_bias_act with relu runs cudnnConvolutionBiasActivationForward; if cuDNN answers
//     NOT_SUPPORTED for the chosen algorithm/layout/math (it may, e.g. NHWC f32 with FMA
//     math), the kernel falls back for good to the convolution plus the bias+relu kernel.
//     The fused call (z = y with
//     alpha2 = 0, so y is never read). "none", "sigmoid" and "tanh" run the convolution and
//     then one bias+activation kernel (elementwise.cu): cuDNN's fused call allows IDENTITY only
//     with IMPLICIT_PRECOMP_GEMM, and has no sigmoid/tanh epilogue that is exact.
//
// Workspace: [filter in cuDNN layout][grown image, when padding is asymmetric][cuDNN's own].
#include <algorithm>
#include <string>
#include <vector>

#include "algo_choice.hpp"
#include "cudnn_util.hpp"
#include "cuda_options.hpp"

namespace dlrt::cuda {
namespace {

enum class Dir { kForward, kBackwardData, kBackwardFilter };

struct ConvGeom {
  bool nchw = false;
  int64_t n = 0, h = 0, w = 0, ci = 0, co = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  int64_t groups = 1, cig = 0;  // cig: the filter's dim 2, Ci/groups
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pad_h = 0, pad_w = 0;      // cuDNN's symmetric padding (TF's `before`)
  int64_t extra_h = 0, extra_w = 0;  // TF's after - before: rows/columns grown after the image
  int64_t hp() const { return h + extra_h; }
  int64_t wp() const { return w + extra_w; }
  bool grown() const { return extra_h > 0 || extra_w > 0; }
};

// x, w and y (dy for the backward passes) as the descriptor states them, with the explicit
// pads; nothing derived (docs/design.md, "What a plugin may trust").
ConvGeom conv_geom(const OpView& op, Dir dir) {
  ConvGeom g;
  g.nchw = op.get_string("data_format") == "NCHW";
  const std::vector<int64_t>& x_dims =
      dir == Dir::kBackwardData ? op.output(0).dims : op.input(0).dims;
  const std::vector<int64_t>& w_dims =
      dir == Dir::kBackwardFilter ? op.output(0).dims : op.input(1).dims;
  const std::vector<int64_t>& y_dims = dir == Dir::kForward        ? op.output(0).dims
                                       : dir == Dir::kBackwardData ? op.input(0).dims
                                                                   : op.input(1).dims;
  plugin::ImageShape x = plugin::image_shape(x_dims, g.nchw);
  plugin::ImageShape y = plugin::image_shape(y_dims, g.nchw);
  g.n = x.n, g.h = x.h, g.w = x.w, g.ci = x.c;
  g.kh = w_dims[0], g.kw = w_dims[1], g.cig = w_dims[2], g.co = w_dims[3];
  g.groups = plugin::conv_groups(op);
  const auto& s = op.get_ints("strides", 2);
  const auto& d = op.get_ints("dilations", 2);
  g.sh = s[0], g.sw = s[1], g.dh = d[0], g.dw = d[1];
  plugin::Window1D wh = plugin::window_of(op, 0, g.h, g.kh, g.sh, g.dh, y.h);
  plugin::Window1D ww = plugin::window_of(op, 1, g.w, g.kw, g.sw, g.dw, y.w);
  g.oh = wh.out, g.ow = ww.out;
  g.pad_h = wh.pad_before, g.pad_w = ww.pad_before;
  g.extra_h = wh.pad_after - wh.pad_before, g.extra_w = ww.pad_after - ww.pad_before;
  return g;
}

void check_conv_view(const OpView& op, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  require_f32(op);
  // conv2d_transpose(x, w) is conv2d_backward_data(dy = x, w) into y (w is that convolution's
  // filter, "pads" its pads: core/ops/infer_conv_transpose.cc), so it runs as one.
  const Dir dir = op.name() == "conv2d_backward_data" || op.name() == "conv2d_transpose" ||
                          op.name() == "conv2d_backward_data_add"
                      ? Dir::kBackwardData
                  : op.name() == "conv2d_backward_filter" ? Dir::kBackwardFilter
                                                          : Dir::kForward;
  ConvGeom g = conv_geom(op, dir);
  const std::string& name = op.name();
  // cuDNN pads both sides alike, and the image grown after it (extra >= 0) gives every pads
  // with after >= before (TF's SAME, and conv2d_transpose's VALID/SAME pads). Fewer cells
  // after than before (explicit pads only) would need the image cut instead of grown, which
  // this kernel does not do: declined, so that placement gives the op to a device that runs it.
  if (g.extra_h < 0 || g.extra_w < 0)
    plugin::fail(DLRT_UNIMPLEMENTED,
                 "cuda: " + name + ": explicit pads with fewer cells after than before (" +
                     std::to_string(g.pad_h) + "," + std::to_string(g.pad_w) + " before, " +
                     std::to_string(g.pad_h + g.extra_h) + "," +
                     std::to_string(g.pad_w + g.extra_w) + " after) are not run by this kernel");
  for (int64_t v : {g.n, g.hp(), g.wp(), g.ci, g.co, g.kh, g.kw, g.oh, g.ow, g.groups})
    to_int(v, name);
  fill_cost(cost, dev, 2.0 * double(g.n * g.oh * g.ow * g.co) * double(g.kh * g.kw * g.cig),
            operand_bytes(op));
}

void check_conv(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  check_conv_view(OpView(&d), dev, cost);
}

// conv2d_backward (dy, x, w -> dx, dw) as its two parts, conv2d_backward_data on dy, w and
// conv2d_backward_filter on x, dy (cuDNN has no call that gives both).
OpView data_part(const OpView& op) { return op.part("conv2d_backward_data", {0, 2}, {0}); }
OpView filter_part(const OpView& op) { return op.part("conv2d_backward_filter", {1, 0}, {1}); }
void check_conv_backward(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  const OpView op(&d);
  dlrt_op_cost part{};
  part.struct_size = sizeof(part);
  check_conv_view(data_part(op), dev, &part);
  check_conv_view(filter_part(op), dev, cost);
  if (cost != nullptr) {
    cost->flops += part.flops, cost->bytes += part.bytes;
    cost->estimated_us += part.estimated_us;
  }
}

const char* math_name(cudnnMathType_t m) {
  return m == CUDNN_FMA_MATH ? "fma" : m == CUDNN_DEFAULT_MATH ? "default" : "tensor-op";
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(const OpView& op, Dir dir)
      : name_(op.name()),
        dir_(dir),
        g_(conv_geom(op, dir)),
        addend_(op.name() == "conv2d_backward_data_add") {
    const ConvGeom& g = g_;
    if (op.name() == "conv2d_bias_act") {
      act_ = parse_act(op);
      fused_relu_ = act_ == math::Act::kRelu;
      has_bias_ = true;
    }
    set_image_desc(x_desc_, g.nchw, g.n, g.ci, g.hp(), g.wp(), name_);
    set_image_desc(y_desc_, g.nchw, g.n, g.co, g.oh, g.ow, name_);
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(
        w_desc_, CUDNN_DATA_FLOAT, g.nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC,
        to_int(g.co, name_), to_int(g.cig, name_), to_int(g.kh, name_), to_int(g.kw, name_)));
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        conv_desc_, to_int(g.pad_h + 1, name_) - 1, to_int(g.pad_w + 1, name_) - 1,
        to_int(g.sh, name_), to_int(g.sw, name_), to_int(g.dh, name_), to_int(g.dw, name_),
        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionMathType(conv_desc_, CUDNN_FMA_MATH));
    CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv_desc_, to_int(g.groups, name_)));
    int on = 0, oc = 0, ooh = 0, oow = 0;
    CUDNN_CHECK(
        cudnnGetConvolution2dForwardOutputDim(conv_desc_, x_desc_, w_desc_, &on, &oc, &ooh, &oow));
    if (on != g.n || oc != g.co || ooh != g.oh || oow != g.ow)
      plugin::fail(DLRT_INTERNAL, "cuda: " + name_ + ": cuDNN's output (" + std::to_string(ooh) +
                                      "x" + std::to_string(oow) + ") differs from TensorFlow's (" +
                                      std::to_string(g.oh) + "x" + std::to_string(g.ow) + ")");
    if (has_bias_) {
      CUDNN_CHECK(cudnnSetTensor4dDescriptor(b_desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1,
                                             to_int(g.co, name_), 1, 1));
      CUDNN_CHECK(cudnnSetActivationDescriptor(act_desc_, CUDNN_ACTIVATION_RELU,
                                               CUDNN_NOT_PROPAGATE_NAN, 0.0));
    }
    choose_algorithm();
    filter_off_ = plan_.add(static_cast<size_t>(g.kh * g.kw * g.cig * g.co) * sizeof(float));
    if (g.grown())
      grown_off_ = plan_.add(static_cast<size_t>(g.n * g.hp() * g.wp() * g.ci) * sizeof(float));
    cudnn_off_ = plan_.add(cudnn_bytes_);
    // The strided views between HWIO and cuDNN's filter layout.
    const std::vector<int64_t> hwio = {g.kh, g.kw, g.cig, g.co};
    to_cudnn_ = transpose_view(
        hwio, g.nchw ? std::vector<int64_t>{3, 2, 0, 1} : std::vector<int64_t>{3, 0, 1, 2});
    const std::vector<int64_t> cudnn_dims = g.nchw ? std::vector<int64_t>{g.co, g.cig, g.kh, g.kw}
                                                   : std::vector<int64_t>{g.co, g.kh, g.kw, g.cig};
    from_cudnn_ = transpose_view(
        cudnn_dims, g.nchw ? std::vector<int64_t>{2, 3, 1, 0} : std::vector<int64_t>{1, 2, 3, 0});
    // The crop of a grown data gradient back to the image: dims of dx as stored, strides of
    // the grown buffer.
    const std::vector<int64_t> grown_dims =
        plugin::image_shape(g.n, g.hp(), g.wp(), g.ci, g.nchw).dims();
    const std::vector<int64_t> grown_strides = plugin::row_major_strides(grown_dims);
    const std::vector<int64_t> dx_dims = plugin::image_shape(g.n, g.h, g.w, g.ci, g.nchw).dims();
    crop_.rank = 4;
    for (int k = 0; k < 4; ++k) crop_.dims[k] = dx_dims[k], crop_.stride[0][k] = grown_strides[k];
  }

  size_t workspace_bytes() const { return plan_.bytes; }

  void run(cudaStream_t stream, const dlrt_kernel_args& a) override {
    const ConvGeom& g = g_;
    check_args(a, dir_ == Dir::kForward ? (has_bias_ ? 3 : 2) : addend_ ? 3 : 2, 1, plan_.bytes,
               name_);
    auto held = handle_.use(stream);  // the GPU's shared handle, on this run's stream
    float* wbuf = static_cast<float*>(at(a.workspace, filter_off_));
    float* grown = g.grown() ? static_cast<float*>(at(a.workspace, grown_off_)) : nullptr;
    void* ws = cudnn_bytes_ > 0 ? at(a.workspace, cudnn_off_) : nullptr;
    const int64_t filter_elems = g.kh * g.kw * g.cig * g.co;
    const float one = 1.0f, zero = 0.0f;

    if (dir_ == Dir::kForward) {
      const float* x = in<float>(a, 0);
      float* y = out<float>(a, 0);
      launch_strided_copy(stream, in(a, 1), wbuf, filter_elems, sizeof(float), to_cudnn_);
      if (grown != nullptr) {
        launch_pad_image(stream, x, grown, g.nchw, g.n, g.h, g.w, g.ci, g.extra_h, g.extra_w);
        x = grown;
      }
      // The fused call may be refused for this algorithm, layout or math type (cuDNN answers
      // NOT_SUPPORTED before enqueuing anything): then this kernel drops the fused path for
      // good and runs the convolution plus the bias+activation kernel, which gives the same
      // result. The first run of an executable is never captured, so the refusal is met there.
      if (fused_relu_) {
        const cudnnStatus_t st = cudnnConvolutionBiasActivationForward(
            handle_, &one, x_desc_, x, w_desc_, wbuf, conv_desc_, fwd_, ws, cudnn_bytes_, &zero,
            y_desc_, y, b_desc_, in<float>(a, 2), act_desc_, y_desc_, y);
        if (st != CUDNN_STATUS_NOT_SUPPORTED) {
          CUDNN_CHECK(st);
          return;
        }
        fused_relu_ = false;
        plugin::log(DLRT_LOG_INFO,
                    "cuda: " + name_ +
                        ": cuDNN refused the fused bias+relu for forward algorithm " +
                        std::to_string(int(fwd_)) + " (" + cudnnGetErrorString(st) +
                        "); running the convolution and the bias+relu kernel instead");
      }
      {
        CUDNN_CHECK(cudnnConvolutionForward(handle_, &one, x_desc_, x, w_desc_, wbuf, conv_desc_,
                                            fwd_, ws, cudnn_bytes_, &zero, y_desc_, y));
        if (has_bias_)
          launch_bias_act(stream, y, in<float>(a, 2), g.n * g.oh * g.ow * g.co, g.co,
                          g.nchw ? g.oh * g.ow : 1, act_);
      }
    } else if (dir_ == Dir::kBackwardData) {
      // dy: input 0, w: input 1 -> dx; conv2d_backward_data_add's addend (input 2) is where
      // dx starts (cuDNN's beta = 1), or, at the grown size, added after the crop.
      launch_strided_copy(stream, in(a, 1), wbuf, filter_elems, sizeof(float), to_cudnn_);
      float* dx = grown != nullptr ? grown : out<float>(a, 0);
      const int64_t dx_elems = g.n * g.h * g.w * g.ci;
      const bool start_from_addend = addend_ && grown == nullptr;
      if (start_from_addend && a.inputs[2] != a.outputs[0])
        CUDA_CHECK_MSG(cudaMemcpyAsync(dx, a.inputs[2], size_t(dx_elems) * sizeof(float),
                                       cudaMemcpyDeviceToDevice, stream),
                       name_ + ": addend");
      CUDNN_CHECK(cudnnConvolutionBackwardData(handle_, &one, w_desc_, wbuf, y_desc_, in(a, 0),
                                               conv_desc_, bwd_data_, ws, cudnn_bytes_,
                                               start_from_addend ? &one : &zero, x_desc_, dx));
      if (grown != nullptr) {
        launch_strided_copy(stream, grown, out(a, 0), dx_elems, sizeof(float), crop_);
        if (addend_) launch_add_in_place(out<float>(a, 0), in<float>(a, 2), dx_elems, stream);
      }
    } else {
      // x: input 0, dy: input 1 -> dw (HWIO)
      const float* x = in<float>(a, 0);
      if (grown != nullptr) {
        launch_pad_image(stream, x, grown, g.nchw, g.n, g.h, g.w, g.ci, g.extra_h, g.extra_w);
        x = grown;
      }
      CUDNN_CHECK(cudnnConvolutionBackwardFilter(handle_, &one, x_desc_, x, y_desc_, in(a, 1),
                                                 conv_desc_, bwd_filter_, ws, cudnn_bytes_, &zero,
                                                 w_desc_, wbuf));
      launch_strided_copy(stream, wbuf, out(a, 0), filter_elems, sizeof(float), from_cudnn_);
    }
  }

 private:
  // Picks from cuDNN's heuristic list by algo_choice.hpp's rule: the first candidate that
  // succeeds, is not a tensor-op (TF32) kernel, is deterministic unless the plugin was created
  // with deterministic=0, and whose workspace query succeeds within cudnn_workspace_mb.
  template <typename Perf, typename Query>
  int pick(const Perf* perf, int returned, Query&& workspace_of, size_t* bytes_out,
           std::string* why_none) {
    const CudaOptions& o = creating_options();
    std::vector<AlgoCandidate> list;
    std::vector<size_t> bytes(returned, 0);
    for (int i = 0; i < returned; ++i) {
      AlgoCandidate c;
      c.algo = int(perf[i].algo);
      c.succeeded = perf[i].status == CUDNN_STATUS_SUCCESS;
      c.tensor_op = perf[i].mathType == CUDNN_TENSOR_OP_MATH ||
                    perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
      c.deterministic = perf[i].determinism == CUDNN_DETERMINISTIC;
      c.workspace_known =
          c.succeeded && workspace_of(perf[i].algo, &bytes[i]) == CUDNN_STATUS_SUCCESS;
      c.workspace_bytes = bytes[i];
      list.push_back(c);
    }
    const int i = choose_algo(list, {o.deterministic, o.cudnn_workspace_limit}, why_none);
    if (i >= 0) *bytes_out = bytes[i];
    return i;
  }

  void choose_algorithm() {
    auto held = handle_.lock();  // shared with the GPU's other kernels
    constexpr int kMax = 16;
    int returned = 0;
    std::string chosen, why_none;
    size_t bytes = 0;
    if (dir_ == Dir::kForward) {
      cudnnConvolutionFwdAlgoPerf_t perf[kMax];
      CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle_, x_desc_, w_desc_, conv_desc_,
                                                         y_desc_, kMax, &returned, perf));
      const int i = pick(
          perf, returned,
          [&](cudnnConvolutionFwdAlgo_t a, size_t* b) {
            return cudnnGetConvolutionForwardWorkspaceSize(handle_, x_desc_, w_desc_, conv_desc_,
                                                           y_desc_, a, b);
          },
          &bytes, &why_none);
      if (i >= 0) {
        fwd_ = perf[i].algo, cudnn_bytes_ = bytes;
        chosen = "forward algorithm " + std::to_string(int(fwd_)) + " (" +
                 math_name(perf[i].mathType) + ")";
      }
    } else if (dir_ == Dir::kBackwardData) {
      cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
      CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle_, w_desc_, y_desc_, conv_desc_,
                                                              x_desc_, kMax, &returned, perf));
      const int i = pick(
          perf, returned,
          [&](cudnnConvolutionBwdDataAlgo_t a, size_t* b) {
            return cudnnGetConvolutionBackwardDataWorkspaceSize(handle_, w_desc_, y_desc_,
                                                                conv_desc_, x_desc_, a, b);
          },
          &bytes, &why_none);
      if (i >= 0) {
        bwd_data_ = perf[i].algo, cudnn_bytes_ = bytes;
        chosen = "backward-data algorithm " + std::to_string(int(bwd_data_)) + " (" +
                 math_name(perf[i].mathType) + ")";
      }
    } else {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
      CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
          handle_, x_desc_, y_desc_, conv_desc_, w_desc_, kMax, &returned, perf));
      const int i = pick(
          perf, returned,
          [&](cudnnConvolutionBwdFilterAlgo_t a, size_t* b) {
            return cudnnGetConvolutionBackwardFilterWorkspaceSize(handle_, x_desc_, y_desc_,
                                                                  conv_desc_, w_desc_, a, b);
          },
          &bytes, &why_none);
      if (i >= 0) {
        bwd_filter_ = perf[i].algo, cudnn_bytes_ = bytes;
        chosen = "backward-filter algorithm " + std::to_string(int(bwd_filter_)) + " (" +
                 math_name(perf[i].mathType) + ")";
      }
    }
    if (chosen.empty())
      plugin::fail(DLRT_UNIMPLEMENTED,
                   "cuda: " + name_ + ": cuDNN offers no usable f32 algorithm for this shape (" +
                       why_none + ")");
    const ConvGeom& g = g_;
    plugin::log(DLRT_LOG_INFO, "cuda: " + name_ + " x (" + std::to_string(g.n) + "," +
                                   std::to_string(g.h) + "," + std::to_string(g.w) + "," +
                                   std::to_string(g.ci) + ") " + (g.nchw ? "NCHW" : "NHWC") +
                                   ", filter " + std::to_string(g.kh) + "x" + std::to_string(g.kw) +
                                   "x" + std::to_string(g.cig) + "x" + std::to_string(g.co) +
                                   (g.groups > 1 ? ", groups " + std::to_string(g.groups) : "") +
                                   ": " + chosen + ", cuDNN workspace " +
                                   std::to_string(cudnn_bytes_) + " bytes" +
                                   (fused_relu_ ? ", fused bias+relu" : ""));
  }

  std::string name_;
  Dir dir_;
  ConvGeom g_;
  math::Act act_ = math::Act::kNone;
  bool fused_relu_ = false, has_bias_ = false;
  bool addend_;  // conv2d_backward_data_add: input 2 is added to dx
  SharedCudnnHandle handle_;
  TensorDesc x_desc_, y_desc_, b_desc_;
  FilterDesc w_desc_;
  ConvDesc conv_desc_;
  ActDesc act_desc_;
  cudnnConvolutionFwdAlgo_t fwd_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnConvolutionBwdDataAlgo_t bwd_data_ = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
  cudnnConvolutionBwdFilterAlgo_t bwd_filter_ = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0;
  size_t cudnn_bytes_ = 0;
  WorkspacePlan plan_;
  size_t filter_off_ = 0, grown_off_ = 0, cudnn_off_ = 0;
  math::Strided to_cudnn_, from_cudnn_, crop_;
};

// conv2d_backward's kernel: its parts' kernels one after the other on the stream, sharing the
// workspace.
class ConvBackwardPair final : public Kernel {
 public:
  explicit ConvBackwardPair(const OpView& op)
      : data_(data_part(op), Dir::kBackwardData), filter_(filter_part(op), Dir::kBackwardFilter) {}
  size_t workspace_bytes() const {
    return std::max(data_.workspace_bytes(), filter_.workspace_bytes());
  }
  void run(cudaStream_t stream, const dlrt_kernel_args& args) override {
    const void* data_in[2] = {args.inputs[0], args.inputs[2]};  // dy, w
    void* data_out[1] = {args.outputs[0]};                      // dx
    dlrt_kernel_args a = args;
    a.num_inputs = 2, a.inputs = data_in, a.num_outputs = 1, a.outputs = data_out;
    data_.run(stream, a);
    const void* filter_in[2] = {args.inputs[1], args.inputs[0]};  // x, dy
    void* filter_out[1] = {args.outputs[1]};                      // dw
    a.inputs = filter_in, a.outputs = filter_out;
    filter_.run(stream, a);
  }

 private:
  ConvKernel data_, filter_;
};

std::unique_ptr<Kernel> create_conv_backward(const dlrt_op_desc& d, const dlrt_device_desc&,
                                             size_t* workspace) {
  auto k = std::make_unique<ConvBackwardPair>(OpView(&d));
  *workspace = k->workspace_bytes();
  return k;
}

template <Dir D>
std::unique_ptr<Kernel> create_conv(const dlrt_op_desc& d, const dlrt_device_desc&,
                                    size_t* workspace) {
  OpView op(&d);
  auto k = std::make_unique<ConvKernel>(op, D);
  *workspace = k->workspace_bytes();
  return k;
}

}  // namespace

DLRT_CUDA_OPS(t) {
  t.push_back({"conv2d", &check_conv, &create_conv<Dir::kForward>});
  t.push_back({"conv2d_bias_act", &check_conv, &create_conv<Dir::kForward>});
  t.push_back({"conv2d_backward_data", &check_conv, &create_conv<Dir::kBackwardData>});
  t.push_back({"conv2d_backward_data_add", &check_conv, &create_conv<Dir::kBackwardData>});
  t.push_back({"conv2d_backward_filter", &check_conv, &create_conv<Dir::kBackwardFilter>});
  t.push_back({"conv2d_backward", &check_conv_backward, &create_conv_backward});
  t.push_back({"conv2d_transpose", &check_conv, &create_conv<Dir::kBackwardData>});
}

}  // namespace dlrt::cuda
