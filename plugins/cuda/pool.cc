// pool.cc: max_pool2d, avg_pool2d and their backward ops, f32, NHWC or NCHW.
//
// Which implementation runs, decided in create:
//   - forward max/avg and avg backward: cuDNN (cudnnPoolingForward/Backward; average pooling
//     is CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, TensorFlow's rule; max propagates NaN)
//     when the padding is symmetric on both axes (VALID, or SAME with an even total);
//   - otherwise this plugin's own kernels (pool.cu): TF's SAME puts the odd padding cell
//     after the image and cuDNN pads both sides alike;
//   - max_pool2d_backward: always the own kernel. docs/ops.md sends the gradient to the
//     *first* maximum of each window; cuDNN does not promise which maximum of a tie gets it,
//     and ties are common after relu (windows of zeros). The own kernel gathers per input
//     cell and needs neither y nor a workspace.
//   - max_pool2d_backward_relu_bias: the same kernel with relu_grad's mask (x > 0) applied
//     per cell, then bias_add_grad's split reduction over dz for db (make_channel_sum).
// Average pooling's cuDNN backward reads neither x nor y (only dy and the window geometry), so
// the descriptors are passed with dy in y's place and dx in x's.
#include <string>

#include "cudnn_util.hpp"

namespace dlrt::cuda {
namespace {

// x and y (dy for the backward ops) as the descriptor states them, with the explicit pads.
math::Pool2D pool_geom(const OpView& op, bool* symmetric) {
  const bool nchw = op.get_string("data_format") == "NCHW";
  const bool backward = op.name() == "max_pool2d_backward" || op.name() == "avg_pool2d_backward" ||
                        op.name() == "max_pool2d_backward_relu_bias";
  const auto& k = op.get_ints("ksize", 2);
  const auto& s = op.get_ints("strides", 2);
  plugin::ImageShape x = plugin::image_shape(
      op.name() == "avg_pool2d_backward" ? op.output(0).dims : op.input(0).dims, nchw);
  plugin::ImageShape y =
      plugin::image_shape(backward ? op.input(op.num_inputs() - 1).dims : op.output(0).dims, nchw);
  plugin::Window1D wh = plugin::window_of(op, 0, x.h, k[0], s[0], 1, y.h);
  plugin::Window1D ww = plugin::window_of(op, 1, x.w, k[1], s[1], 1, y.w);
  math::Pool2D g;
  g.nchw = nchw;
  g.n = x.n, g.h = x.h, g.w = x.w, g.c = x.c;
  g.oh = wh.out, g.ow = ww.out;
  g.kh = k[0], g.kw = k[1], g.sh = s[0], g.sw = s[1];
  g.pad_top = wh.pad_before, g.pad_left = ww.pad_before;
  *symmetric = wh.pad_before == wh.pad_after && ww.pad_before == ww.pad_after;
  return g;
}

void check_pool(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  require_f32(op);
  bool symmetric = false;
  pool_geom(op, &symmetric);  // UNIMPLEMENTED without explicit pads
  const auto& k = op.get_ints("ksize", 2);
  double outputs = 0;
  for (const auto& t : op.outputs()) outputs = std::max(outputs, double(t.numel));
  for (const auto& t : op.inputs()) outputs = std::max(outputs, double(t.numel));
  fill_cost(cost, dev, outputs * double(k[0] * k[1]), operand_bytes(op));
}

class PoolKernel final : public Kernel {
 public:
  PoolKernel(const OpView& op) : name_(op.name()) {
    relu_bias_ = name_ == "max_pool2d_backward_relu_bias";
    is_max_ = name_ == "max_pool2d" || name_ == "max_pool2d_backward" || relu_bias_;
    backward_ = name_ == "max_pool2d_backward" || name_ == "avg_pool2d_backward" || relu_bias_;
    bool symmetric = false;
    g_ = pool_geom(op, &symmetric);
    use_cudnn_ = symmetric && !(is_max_ && backward_) && fits_int();
    if (relu_bias_)  // db: dz summed over every dim but the channel one
      channel_sum_ = make_channel_sum(op.input(0).dims, g_.nchw ? 1 : 3, &workspace_);
    if (use_cudnn_) {
      handle_ = std::make_unique<SharedCudnnHandle>();
      pool_ = std::make_unique<PoolDesc>();
      x_ = std::make_unique<TensorDesc>();
      y_ = std::make_unique<TensorDesc>();
      set_image_desc(*x_, g_.nchw, g_.n, g_.c, g_.h, g_.w, name_);
      set_image_desc(*y_, g_.nchw, g_.n, g_.c, g_.oh, g_.ow, name_);
      CUDNN_CHECK(cudnnSetPooling2dDescriptor(
          *pool_, is_max_ ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
          CUDNN_PROPAGATE_NAN, int(g_.kh), int(g_.kw), int(g_.pad_top), int(g_.pad_left),
          int(g_.sh), int(g_.sw)));
      int n = 0, c = 0, h = 0, w = 0;
      CUDNN_CHECK(cudnnGetPooling2dForwardOutputDim(*pool_, *x_, &n, &c, &h, &w));
      if (h != g_.oh || w != g_.ow)
        use_cudnn_ = false;  // never expected; the own kernel is always right
    }
    plugin::log(DLRT_LOG_INFO, "cuda: " + name_ + " " + std::to_string(g_.kh) + "x" +
                                   std::to_string(g_.kw) + " stride " + std::to_string(g_.sh) +
                                   "x" + std::to_string(g_.sw) + ": " +
                                   (use_cudnn_ ? "cuDNN" : "own kernel"));
  }

  void run(cudaStream_t stream, const dlrt_kernel_args& a) override {
    const float one = 1.0f, zero = 0.0f;
    if (!backward_) {
      check_args(a, 1, 1, 0, name_);
      if (use_cudnn_) {
        auto held = handle_->use(stream);
        CUDNN_CHECK(
            cudnnPoolingForward(*handle_, *pool_, &one, *x_, in(a, 0), &zero, *y_, out(a, 0)));
      } else {
        launch_pool_forward(stream, g_, in<float>(a, 0), out<float>(a, 0), is_max_);
      }
    } else if (relu_bias_) {
      check_args(a, 2, 2, workspace_, name_);  // x, dy -> dz, db
      launch_pool_backward(stream, g_, in<float>(a, 0), in<float>(a, 1), out<float>(a, 0), true,
                           true);
      channel_sum_(stream, out<float>(a, 0), out<float>(a, 1), a.workspace);
    } else if (is_max_) {
      check_args(a, 2, 1, 0, name_);  // x, dy -> dx
      launch_pool_backward(stream, g_, in<float>(a, 0), in<float>(a, 1), out<float>(a, 0), true);
    } else {
      check_args(a, 1, 1, 0, name_);  // dy -> dx
      if (use_cudnn_) {
        auto held = handle_->use(stream);
        CUDNN_CHECK(cudnnPoolingBackward(*handle_, *pool_, &one, *y_, in(a, 0), *y_, in(a, 0), *x_,
                                         out(a, 0), &zero, *x_, out(a, 0)));
      } else {
        launch_pool_backward(stream, g_, nullptr, in<float>(a, 0), out<float>(a, 0), false);
      }
    }
  }

  size_t workspace_bytes() const { return workspace_; }

 private:
  bool fits_int() const {
    for (int64_t v : {g_.n, g_.c, g_.h, g_.w, g_.kh, g_.kw, g_.sh, g_.sw})
      if (v > INT_MAX) return false;
    return true;
  }

  std::string name_;
  bool is_max_ = false, backward_ = false, use_cudnn_ = false;
  bool relu_bias_ = false;  // max_pool2d_backward_relu_bias
  ChannelSum channel_sum_;  // its db
  size_t workspace_ = 0;
  math::Pool2D g_;
  std::unique_ptr<SharedCudnnHandle> handle_;
  std::unique_ptr<PoolDesc> pool_;
  std::unique_ptr<TensorDesc> x_, y_;
};

std::unique_ptr<Kernel> create_pool(const dlrt_op_desc& d, const dlrt_device_desc&,
                                    size_t* workspace) {
  auto k = std::make_unique<PoolKernel>(OpView(&d));
  *workspace = k->workspace_bytes();
  return k;
}

}  // namespace

DLRT_CUDA_OPS(t) {
  for (const char* op : {"max_pool2d", "avg_pool2d", "max_pool2d_backward", "avg_pool2d_backward",
                         "max_pool2d_backward_relu_bias"})
    t.push_back({op, &check_pool, &create_pool});
}

}  // namespace dlrt::cuda
