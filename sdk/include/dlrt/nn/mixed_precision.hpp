// dlrt/nn/mixed_precision.hpp: Keras' dtype policies (tf.keras.mixed_precision).
//
//   nn::set_global_policy("mixed_bfloat16");   // layers made from now on compute in bf16
//   nn::Sequential model(ctx, {...});
//   model.compile(...);                        // or CompileConfig::dtype_policy for one model
//
// A policy names two dtypes: the one variables are stored in (always f32 here: weights,
// optimizer slots, moving statistics and checkpoints stay f32) and the one a layer computes
// in. Under "mixed_bfloat16" / "mixed_float16" each layer call casts its float inputs and its
// f32 weights to bf16 / f16, runs its ops on those (convolutions and matmuls on 16-bit
// operands), and hands a 16-bit output on; the gradient of each cast is a cast back, so the
// optimizer updates the f32 variables with f32 gradients. Kept in f32, as Keras advises: the
// model's outputs (cast to f32 after the last layer, so losses and metrics are f32), softmax
// (an activation computed in f32 from whatever dtype came in), and the layers whose
// statistics need the range (BatchNormalization, LayerNormalization: Layer::float32_only).
//
// Under "mixed_float16" the step also scales the loss dynamically, as Keras'
// LossScaleOptimizer does (loss_scale.hpp: a step with non-finite gradients changes nothing
// and halves the scale). bf16 has f32's range and needs no scaling, which is why
// "mixed_bfloat16" is the policy to use on CPUs (docs/nn.md, "Mixed precision").
//
// Like Keras, a layer takes the global policy when it is made (Layer::dtype_policy), and
// `layer.set_dtype_policy("float32")` keeps one layer in f32.
#pragma once

#include <dlrt/context.hpp>
#include <dlrt/types.h>

#include <string>

namespace dlrt::nn {

// The dtype a policy computes in: f32 for "float32", bf16 for "mixed_bfloat16", f16 for
// "mixed_float16". INVALID_ARGUMENT naming the policies for any other name.
dlrt_dtype policy_compute_dtype(const std::string& policy);

// keras.mixed_precision.set_global_policy: the policy of the layers made after this call.
// The policy is one per process (held in libdlrt_nn), shared by every library that links it.
void set_global_policy(const std::string& policy);
// keras.mixed_precision.global_policy().name
const std::string& global_policy();

namespace detail {
// Why a mixed_bfloat16 model runs no faster than float32 on the device automatic placement
// picks in `ctx` (GPU, then ACCEL, then CPU; not the reference oracle): "" when that device
// computes bf16 natively (its "native_dtypes" attribute lists bf16) or does not say, else a
// sentence naming the device and what it lacks.
std::string bf16_is_converted_on(const Context& ctx);
// Prints that sentence to stderr once per process and device when a model with bf16 layers
// is compiled, as TensorFlow's "mixed precision compatibility check" warns at
// set_global_policy. The policy is kept (its bf16 numerics are the point of it); only the
// speed is said.
void warn_once_if_bf16_is_converted(const Context& ctx);
}  // namespace detail

}  // namespace dlrt::nn
