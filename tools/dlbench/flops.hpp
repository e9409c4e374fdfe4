// flops.hpp: the training FLOP of the models whose FLOP dlbench counts by formula rather than
// from a plan's kernels (train.cc walks cnn's and resnet20's). The floor of a step is its FLOP
// at the device's peak, so only the multiply-adds count: 2 FLOP each, as for the convolutions.
#pragma once

#include <cstdint>

namespace dlbench {

// samples/char_transformer's GPT (models.hpp's gpt()) on one window of T tokens: d model
// width, L pre-norm blocks of `heads` heads with a 4d MLP, a V-way output projection. Its
// matmuls, forward, each 2*m*n*k:
//   per block   Q, K, V projections  3 x 2*T*d*d
//               scores Q K^T          2*T*T*d   (heads x 2*T*T*(d/heads); the causal mask
//               weights x V           2*T*T*d    hides half, the product is computed whole)
//               output projection    2*T*d*d
//               MLP d->4d->d         2 x 2*T*d*4d
//             = 24*T*d^2 + 4*T^2*d
//   logits      2*T*d*V
// The embedding lookups, layer norms, softmax, GELU, the loss and AdamW are left out (as the
// cnn's count leaves out pooling and Adam). Backward is twice the forward: each matmul's two
// operands both get a gradient (the tokens enter through the embedding table, not a matmul,
// so no matmul is spared). Defaults (T 128, d 128, 4 heads, 4 blocks, V 256): 729.8 MFLOP.
constexpr double char_transformer_train_flop_per_window(int64_t T, int64_t d, int64_t layers,
                                                        int64_t vocab) {
  const double t = static_cast<double>(T), m = static_cast<double>(d);
  const double block = 24.0 * t * m * m + 4.0 * t * t * m;
  const double forward = static_cast<double>(layers) * block + 2.0 * t * m * static_cast<double>(vocab);
  return 3.0 * forward;
}

// Multiply-adds of a convolution, per image: output pixels x kernel taps x in x out channels;
// of a transposed convolution, the same over its *input* pixels (each input pixel scatters a
// kh x kw x out patch); of a dense layer, in x out.
constexpr double conv_mac(double out_pixels, double taps, double in, double out) {
  return out_pixels * taps * in * out;
}

// samples/vae (vae_model.hpp, latent 16) trained by its custom step, per image. Forward MACs:
//   encoder  Conv2D 3x3/2 28x28x1 -> 14x14x32    196 x 9 x 1 x 32     =    56,448
//            Conv2D 3x3/2 -> 7x7x64              49 x 9 x 32 x 64     =   903,168
//            two Dense 3136 -> 16 (mean, log_var)                     =   100,352
//   decoder  Dense 16 -> 1568                                         =    25,088
//            Conv2DTranspose 3x3/2 7x7x32 -> 14x14x64 (49 in pixels)  =   903,168
//            Conv2DTranspose 3x3/2 -> 28x28x32 (196 in pixels)        = 3,612,672
//            Conv2DTranspose 3x3/1 -> 28x28x1 (784 in pixels)         =   225,792
// Training: the forward, every layer's filter gradient (as much again) and every data
// gradient but the first convolution's (the image takes none; z's reparameterisation carries
// the decoder's gradient into the encoder): 3 x forward - the first conv, x 2 FLOP.
// 34,847,232 FLOP per image.
constexpr double vae_train_flop_per_image() {
  const double first = conv_mac(14 * 14, 9, 1, 32);
  const double forward = first + conv_mac(7 * 7, 9, 32, 64) + 2 * 3136.0 * 16 +
                         16.0 * 1568 + conv_mac(7 * 7, 9, 32, 64) +
                         conv_mac(14 * 14, 9, 64, 32) + conv_mac(28 * 28, 9, 32, 1);
  return 2.0 * (3.0 * forward - first);
}

// samples/dcgan (dcgan_models.hpp, noise 64) trained by its two-optimizer step, per real
// image (each step also makes one fake image per real one). Forward MACs:
//   generator G      Dense 64 -> 6272 (7x7x128)                           401,408 (= g_in)
//                    Conv2DTranspose 4x4/2 7x7x128 -> 14x14x64 (49 in)  6,422,528
//                    Conv2DTranspose 4x4/2 -> 28x28x1 (196 in)            200,704
//   discriminator D  Conv2D 4x4/2 28x28x1 -> 14x14x64                     200,704 (= d_in)
//                    Conv2D 4x4/2 -> 7x7x128                            6,422,528
//                    Dense 6272 -> 1                                        6,272
// The step, counting the least work its two gradients need:
//   forward          G once, D on the real and on the fake batch         G + 2D
//   d_loss           D's filter gradients on both batches, and the data
//                    gradients feeding them (all but D's first layer)    2 (D + D - d_in)
//   g_loss           D's data gradients on the fake batch down to the
//                    image, then G's filter gradients and data gradients
//                    (all but G's first layer: z takes none)             D + G + G - g_in
// = 3G - g_in + 7D - 2 d_in MACs, x 2 FLOP: 133,355,264 FLOP per real image.
constexpr double dcgan_train_flop_per_image() {
  const double g_in = 64.0 * 6272;
  const double g = g_in + conv_mac(7 * 7, 16, 128, 64) + conv_mac(14 * 14, 16, 64, 1);
  const double d_in = conv_mac(14 * 14, 16, 1, 64);
  const double d = d_in + conv_mac(7 * 7, 16, 64, 128) + 6272.0;
  return 2.0 * (3.0 * g - g_in + 7.0 * d - 2.0 * d_in);
}

}  // namespace dlbench
