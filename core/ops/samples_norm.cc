// core/ops/samples_norm.cc: samples of batch_norm, batch_norm_train, batch_norm_grad and
// batch_norm_relu_grad, and of the residual tail batch_norm_add_relu_train and its backward
// batch_norm_add_relu_grad (samples.hpp): odd H and W, batch 1, channel counts that are not
// multiples of 8, both data formats, rank 2 (N,C), and N = H = W = 1, where every channel's
// batch variance is 0 (the training form must stay finite: y = bias, running variance shrinks
// by momentum). The forward forms run every shape once more with activation relu; the
// scale and bias ranges make the ReLU cut part of every channel.
#include "samples.hpp"

namespace dlrt::ops::samples {
namespace {

struct NormShape {
  const char* format;  // nullptr: data_format left to its default (NHWC)
  Dims x;
  int64_t c;
  const char* note;
};
const NormShape kNormShapes[] = {
    {nullptr, {2, 5, 7, 3}, 3, ""},
    {"NCHW", {2, 3, 5, 7}, 3, ""},
    {"NHWC", {1, 3, 5, 13}, 13, "batch 1"},
    {"NCHW", {1, 11, 3, 3}, 11, "batch 1"},
    {nullptr, {6, 10}, 10, "rank 2 (N,C)"},
    {"NCHW", {3, 9}, 9, "rank 2 (N,C) ignores data_format"},
    {nullptr, {1, 1, 1, 5}, 5, "one value per channel: zero batch variance"},
};

}  // namespace

SampleFn batch_norm(NormPass pass) {
  return [pass](const OpDef&) {
    std::vector<Sample> out;
    const Values x = uniform(-2, 2), scale = uniform(0.5, 1.5), bias = uniform(-1, 1);
    for (const NormShape& s : kNormShapes) {
      const Dims c{s.c};
      Sample k;
      k.note = s.note;
      if (s.format != nullptr) k.attrs.emplace("data_format", s.format);
      switch (pass) {
        case NormPass::kInference:
          k.inputs = {f32_in("x", s.x, x), f32_in("scale", c, scale), f32_in("bias", c, bias),
                      f32_in("mean", c, uniform(-0.5, 0.5)), f32_in("var", c, uniform(0.5, 2))};
          break;
        case NormPass::kTraining:
          k.inputs = {f32_in("x", s.x, x), f32_in("scale", c, scale), f32_in("bias", c, bias),
                      f32_in("running_mean", c, uniform(-0.5, 0.5)),
                      f32_in("running_var", c, uniform(0.5, 2))};
          break;
        case NormPass::kBackward:
          // saved_inv_std in [0.5, 2): variances of 0.25 to 4, as batch_norm_train saves them.
          k.inputs = {f32_in("dy", s.x, uniform(-1, 1)), f32_in("x", s.x, x),
                      f32_in("scale", c, scale), f32_in("saved_mean", c, uniform(-0.5, 0.5)),
                      f32_in("saved_inv_std", c, uniform(0.5, 2))};
          break;
        case NormPass::kAddReluTraining:
          k.inputs = {f32_in("x", s.x, x), f32_in("residual", s.x, uniform(-1, 1)),
                      f32_in("scale", c, scale), f32_in("bias", c, bias),
                      f32_in("running_mean", c, uniform(-0.5, 0.5)),
                      f32_in("running_var", c, uniform(0.5, 2))};
          break;
        case NormPass::kAddReluBackward:
          // y in [-1, 1): the mask (y > 0) cuts about half of every channel; a real y is >= 0
          // with zeros where the ReLU cut, which the mask treats the same as negatives.
          k.inputs = {f32_in("dy", s.x, uniform(-1, 1)), f32_in("y", s.x, uniform(-1, 1)),
                      f32_in("x", s.x, x), f32_in("scale", c, scale),
                      f32_in("saved_mean", c, uniform(-0.5, 0.5)),
                      f32_in("saved_inv_std", c, uniform(0.5, 2))};
          break;
        case NormPass::kReluBackward:
          k.inputs = {f32_in("dy", s.x, uniform(-1, 1)), f32_in("x", s.x, x),
                      f32_in("scale", c, scale), f32_in("bias", c, bias),
                      f32_in("saved_mean", c, uniform(-0.5, 0.5)),
                      f32_in("saved_inv_std", c, uniform(0.5, 2))};
          break;
      }
      out.push_back(k);
      // The training form once more with its running statistics updated in place.
      if (pass == NormPass::kTraining || pass == NormPass::kAddReluTraining) {
        k.in_place = true;
        out.push_back(k);
      }
      // The forward forms once more with the ReLU fused.
      if (pass == NormPass::kInference || pass == NormPass::kTraining) {
        k.attrs.insert_or_assign("activation", "relu");
        k.note = std::string(s.note) + (*s.note ? ", " : "") + "activation relu";
        out.push_back(std::move(k));
      }
    }
    return out;
  };
}

}  // namespace dlrt::ops::samples
