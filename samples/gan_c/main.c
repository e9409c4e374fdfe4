/* samples/gan_c/main.c: train a tiny GAN from plain C99 through dlrt.h alone.
 *
 * What TensorFlow users write with two GradientTapes inside a tf.function, written on the C
 * graph API: a custom training step with two models, two losses and two optimizers, compiled
 * into one executable. The data are 1-D: real samples x ~ N(4, 1.25^2); the generator maps
 * noise z ~ N(0, I_4) to one number, and has learnt when 1000 of its samples have the real
 * mean and spread. It shows, in order:
 *   1. a context and the choice of a device (the first GPU, else the first CPU), as embed_c;
 *   2. models as C helpers over variables: a Dense layer is (kernel, bias) variables plus a
 *      function that adds its ops; the discriminator is called twice (on real and on fake
 *      samples) on the SAME variables, so it is one network, not two;
 *   3. noise drawn inside the graph by the random_normal op (seeded; each run draws fresh
 *      numbers because random ops are keyed by the executable's run count);
 *   4. two losses, the stable binary cross-entropy from logits built from softplus;
 *   5. two Adam optimizers, each with its own step counter, learning rate and slots, each
 *      minimising its own loss over its own model's variables (dlrt_graph_gradients of one
 *      scalar with respect to a list of variables), every update assigned back (why no
 *      stop_gradient is needed for that: see adam_minimize);
 *   6. one training executable (run_assigns 1) that runs the forward pass once and applies
 *      both optimizers' updates, and a sampling executable (run_assigns 0) of the same graph;
 *   7. cleanup in the order the API requires.
 *
 * Every call that can fail returns a dlrt_status* (NULL = OK); CHECK prints its code and
 * message, frees it and jumps to the cleanup. The program exits 0 only if both losses stayed
 * finite and 1000 generated samples have a mean within MEAN_TOLERANCE of 4 and a standard
 * deviation within [STD_LOW, STD_HIGH], so its CTest (sample_gan_c) can fail.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dlrt/dlrt.h"

enum {
  BATCH = 64,  /* real and fake samples per step */
  NOISE = 4,   /* the generator's input: z (BATCH, NOISE) */
  HIDDEN = 16, /* units of each model's hidden layer */
  STEPS = 2000,
  LOG_EVERY = 250,
  NUM_SAMPLES = 1000 /* generated samples the verdict is computed on */
};

/* The real distribution and what the generator's samples must match after training. */
#define REAL_MEAN 4.0
#define REAL_STD 1.25
#define MEAN_TOLERANCE 0.5 /* |mean - 4| < 0.5 */
#define STD_LOW 0.75       /* 0.75 <= std <= 1.75: within 40% of 1.25 */
#define STD_HIGH 1.75

/* On failure: say which call failed, its code name and its message; free the status (the
 * caller owns it) and leave through `cleanup`, where everything made so far is freed. */
#define CHECK(expr)                                                                      \
  do {                                                                                   \
    dlrt_status* status_ = (expr);                                                       \
    if (status_ != NULL) {                                                               \
      fprintf(stderr, "gan_c: FAILED: %s:%d: %s\n  %s: %s\n", __FILE__, __LINE__, #expr, \
              dlrt_code_name(dlrt_status_code(status_)), dlrt_status_message(status_));  \
      dlrt_status_free(status_);                                                         \
      goto cleanup;                                                                      \
    }                                                                                    \
  } while (0)

/* Inside a builder helper: return the first failure to the caller, who CHECKs it. */
#define TRY(expr)                        \
  do {                                   \
    dlrt_status* status_ = (expr);       \
    if (status_ != NULL) return status_; \
  } while (0)

/* ---- the real data: a seeded stream of normals on the host, the same on every machine ---- */

static uint32_t lcg_next(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u; /* Numerical Recipes' LCG, mod 2^32 */
  return *state;
}

/* Uniform in (0, 1]: the top 24 bits (the LCG's best ones), never 0, so log() is finite. */
static double lcg_uniform(uint32_t* state) {
  return (double)((lcg_next(state) >> 8) + 1u) / 16777216.0;
}

/* Box-Muller: two uniforms give one N(0, 1) (the second normal of the pair is dropped, which
 * keeps the stream simple). */
static double lcg_normal(uint32_t* state) {
  const double two_pi = 6.283185307179586;
  const double u1 = lcg_uniform(state), u2 = lcg_uniform(state);
  return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}

/* ---- small builders for the API's versioned structs (as embed_c's) ---------------------- */

/* Versioned structs start with struct_size; zero the rest so reserved fields are 0. */
static dlrt_tensor_desc make_desc(int32_t dtype, int32_t rank, int64_t d0, int64_t d1) {
  dlrt_tensor_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  d.dtype = dtype;
  d.rank = rank; /* 0: a scalar; dims past rank are ignored */
  d.dims[0] = d0;
  d.dims[1] = d1;
  d.layout = DLRT_LAYOUT_DENSE;
  return d;
}

/* Attributes point at caller-owned data (here: literals and locals); the API copies what it
 * keeps, so they only need to live during the call. */
static dlrt_attr attr_float(const char* name, double value) {
  dlrt_attr a;
  memset(&a, 0, sizeof a);
  a.struct_size = DLRT_STRUCT_SIZE(dlrt_attr);
  a.name = name;
  a.type = DLRT_ATTR_FLOAT;
  a.f = value;
  return a;
}

static dlrt_attr attr_int(const char* name, int64_t value) {
  dlrt_attr a = attr_float(name, 0.0);
  a.type = DLRT_ATTR_INT;
  a.i = value;
  return a;
}

static dlrt_attr attr_string(const char* name, const char* value) {
  dlrt_attr a = attr_float(name, 0.0);
  a.type = DLRT_ATTR_STRING;
  a.s = value;
  return a;
}

static dlrt_attr attr_ints(const char* name, const int64_t* values, size_t count) {
  dlrt_attr a = attr_float(name, 0.0);
  a.type = DLRT_ATTR_INTS;
  a.ints = values;
  a.count = count;
  return a;
}

/* One op with one output; `inputs`/`attrs` are only read during the call. A NULL name makes a
 * unique one from the op ("softplus_3"). */
static dlrt_status* add_op(dlrt_graph* graph, const char* op, const dlrt_value* inputs,
                           size_t num_inputs, const dlrt_attr* const* attrs, size_t num_attrs,
                           dlrt_value* out) {
  size_t num_outputs = 0;
  return dlrt_graph_op(graph, op, NULL, inputs, num_inputs, attrs, num_attrs, out, 1, &num_outputs);
}

/* A variable filled with `value`: biases (trainable), Adam's slots and step counters (not). */
static dlrt_status* add_filled_variable(dlrt_graph* graph, const char* name,
                                        const dlrt_tensor_desc* desc, double value,
                                        int32_t trainable, dlrt_value* out) {
  const dlrt_attr fill = attr_float("value", value);
  const dlrt_attr* attrs[1] = {&fill};
  return dlrt_graph_variable(graph, name, desc, "fill", attrs, 1, trainable, out);
}

/* An f32 scalar constant (a learning rate, the 1 a step counter adds). */
static dlrt_status* add_scalar(dlrt_graph* graph, float value, dlrt_value* out) {
  const dlrt_tensor_desc scalar = make_desc(DLRT_F32, 0, 0, 0);
  return dlrt_graph_constant(graph, "", &scalar, &value, sizeof value, out);
}

/* ---- models: a Dense layer is two variables plus a function that adds its ops ----------- */

typedef struct dense {
  dlrt_value kernel;                   /* (fan_in, fan_out), Glorot-uniform, trainable */
  dlrt_value bias;                     /* (fan_out), zeros, trainable */
  char kernel_name[64], bias_name[64]; /* the variables' names, for the optimizer's slots */
} dense;

/* Create the layer's variables "<name>/kernel" and "<name>/bias". The kernel is drawn by a
 * random_uniform init op with its own seed: its first value depends on these attributes
 * only, on every device. Glorot's limit is sqrt(6 / (fan_in + fan_out)). */
static dlrt_status* dense_create(dlrt_graph* graph, const char* name, int64_t fan_in,
                                 int64_t fan_out, int64_t seed, dense* out) {
  const dlrt_tensor_desc kernel_desc = make_desc(DLRT_F32, 2, fan_in, fan_out);
  const dlrt_tensor_desc bias_desc = make_desc(DLRT_F32, 1, fan_out, 0);
  const double limit = sqrt(6.0 / (double)(fan_in + fan_out));
  const dlrt_attr a[3] = {attr_float("minval", -limit), attr_float("maxval", limit),
                          attr_int("seed", seed)};
  const dlrt_attr* attrs[3] = {&a[0], &a[1], &a[2]};
  snprintf(out->kernel_name, sizeof out->kernel_name, "%s/kernel", name);
  snprintf(out->bias_name, sizeof out->bias_name, "%s/bias", name);
  TRY(dlrt_graph_variable(graph, out->kernel_name, &kernel_desc, "random_uniform", attrs, 3, 1,
                          &out->kernel));
  return add_filled_variable(graph, out->bias_name, &bias_desc, 0.0, 1, &out->bias);
}

/* y (N, fan_out) = activation(x (N, fan_in) . kernel + bias): one fused matmul_bias_act.
 * Called once per use: each call adds new ops that read the same two variables. */
static dlrt_status* dense_apply(dlrt_graph* graph, const dense* layer, dlrt_value x,
                                const char* activation, dlrt_value* out) {
  const dlrt_attr act = attr_string("activation", activation); /* none|relu|sigmoid|tanh */
  const dlrt_attr* attrs[1] = {&act};
  dlrt_value in[3];
  in[0] = x, in[1] = layer->kernel, in[2] = layer->bias;
  return add_op(graph, "matmul_bias_act", in, 3, attrs, 1, out);
}

/* The generator: z (N, NOISE) -> tanh(Dense 16) -> Dense 1 -> a sample (N, 1). */
typedef struct generator {
  dense hidden, out;
} generator;

static dlrt_status* generator_apply(dlrt_graph* graph, const generator* g, dlrt_value z,
                                    dlrt_value* out) {
  dlrt_value h;
  TRY(dense_apply(graph, &g->hidden, z, "tanh", &h));
  return dense_apply(graph, &g->out, h, "none", out);
}

/* The discriminator: x (N, 1) -> leaky_relu(Dense 16, alpha 0.2) -> Dense 1 -> a logit (N, 1),
 * "real" when positive. matmul_bias_act has no leaky activation, so it is a separate op. */
typedef struct discriminator {
  dense hidden, out;
} discriminator;

static dlrt_status* discriminator_apply(dlrt_graph* graph, const discriminator* d, dlrt_value x,
                                        dlrt_value* out) {
  const dlrt_attr alpha = attr_float("alpha", 0.2);
  const dlrt_attr* attrs[1] = {&alpha};
  dlrt_value pre, h;
  TRY(dense_apply(graph, &d->hidden, x, "none", &pre));
  TRY(add_op(graph, "leaky_relu", &pre, 1, attrs, 1, &h));
  return dense_apply(graph, &d->out, h, "none", out);
}

/* ---- the loss: binary cross-entropy from logits ----------------------------------------- */

/* The batch mean of bce(logit l, target t) = softplus(l) - t*l, which for the constant targets
 * of a GAN is softplus(-l) when t = 1 and softplus(l) when t = 0. The op set has no sigmoid
 * cross-entropy op; softplus is computed as max(l, 0) + log1p(exp(-|l|)), finite for any
 * logit (docs/ops.md), and its gradient is sigmoid(l), so this is the stable form (Keras'
 * BinaryCrossentropy(from_logits=True)). logits (N, 1) -> a scalar (). */
static dlrt_status* bce_mean(dlrt_graph* graph, dlrt_value logits, int target, dlrt_value* out) {
  dlrt_value x = logits, per_sample;
  if (target == 1) TRY(add_op(graph, "neg", &logits, 1, NULL, 0, &x));
  TRY(add_op(graph, "softplus", &x, 1, NULL, 0, &per_sample));
  /* reduce_mean with no axes: over every axis, to a rank-0 scalar, as gradients need. */
  return add_op(graph, "reduce_mean", &per_sample, 1, NULL, 0, out);
}

/* ---- Adam: a step counter, a learning rate, two slots per variable ---------------------- */

typedef struct adam {
  const char* name;      /* prefix of its variables: "<name>/iterations", ... */
  double beta1;          /* adam_update's attribute (beta2 and epsilon: the defaults) */
  dlrt_value iterations; /* () f32, not trainable: steps done, checkpointable state */
  dlrt_value step;       /* () f32: iterations + 1, the 1-based step this run applies */
  /* () f32, a constant here; a variable written between runs would give a schedule, as
   * nn's optimizers do. */
  dlrt_value learning_rate;
} adam;

/* The optimizer's own counter. adam_update's bias correction needs the 1-based number of the
 * step it applies, so every run computes step = iterations + 1, feeds it to the updates and
 * assigns it back: as nn's optimizers do ("<optimizer>/iterations"). One counter per
 * optimizer, as TensorFlow's optimizer.iterations; a checkpoint would save it with the
 * weights and slots (dlrt_graph_variable_read), so a resumed run corrects as before. */
static dlrt_status* adam_create(dlrt_graph* graph, const char* name, float learning_rate,
                                double beta1, adam* out) {
  const dlrt_tensor_desc scalar = make_desc(DLRT_F32, 0, 0, 0);
  char var_name[64];
  dlrt_value one, in[2];
  out->name = name;
  out->beta1 = beta1;
  snprintf(var_name, sizeof var_name, "%s/iterations", name);
  TRY(add_filled_variable(graph, var_name, &scalar, 0.0, 0, &out->iterations));
  TRY(add_scalar(graph, 1.0f, &one));
  in[0] = out->iterations, in[1] = one;
  TRY(add_op(graph, "add", in, 2, NULL, 0, &out->step));
  TRY(dlrt_graph_assign(graph, out->iterations, out->step));
  return add_scalar(graph, learning_rate, &out->learning_rate);
}

/* What `optimizer.minimize(loss, var_list)` is: the gradients of the scalar `loss` with
 * respect to `params` (built as ops of the same graph), then one adam_update per variable:
 * (param, grad, m, v, step, learning_rate) -> (param', m', v'), each assigned back over its
 * input, which makes the update run in place. The slots m and v are zero-filled variables
 * shaped like the parameter, named "<optimizer>/<variable>/m" and ".../v", not trainable.
 *
 * Why the generator's variables are safe from the discriminator's loss (and the other way
 * round) without a stop_gradient: dlrt_graph_gradients differentiates only along the paths
 * from the values in `params` to `loss`; it never builds or applies gradients for anything
 * else. (PyTorch needs fake.detach() because backward() fills every leaf's .grad; TensorFlow
 * gets the same separation from one tape per loss and each optimizer's var_list.) A single
 * call over every variable of one combined loss would need stop_gradient to keep each half
 * constant to the other's loss, as nn's docs note for "a GAN's other half". */
static dlrt_status* adam_minimize(dlrt_graph* graph, const adam* opt, dlrt_value loss,
                                  const dlrt_value* params, const char* const* param_names,
                                  size_t count) {
  const dlrt_attr beta1 = attr_float("beta1", opt->beta1);
  const dlrt_attr* attrs[1] = {&beta1};
  dlrt_value grads[8];
  size_t k;
  if (count > sizeof grads / sizeof grads[0])
    return dlrt_status_create(DLRT_INVALID_ARGUMENT, "adam_minimize: more than 8 variables");
  TRY(dlrt_graph_gradients(graph, loss, params, count, grads));
  for (k = 0; k < count; ++k) {
    dlrt_tensor_desc desc = make_desc(DLRT_F32, 0, 0, 0);
    char slot_name[160];
    dlrt_value in[6], outs[3];
    size_t num_outputs = 0;
    TRY(dlrt_graph_value_desc(graph, params[k], &desc)); /* the slots' shape */
    in[0] = params[k], in[1] = grads[k];
    snprintf(slot_name, sizeof slot_name, "%s/%s/m", opt->name, param_names[k]);
    TRY(add_filled_variable(graph, slot_name, &desc, 0.0, 0, &in[2]));
    snprintf(slot_name, sizeof slot_name, "%s/%s/v", opt->name, param_names[k]);
    TRY(add_filled_variable(graph, slot_name, &desc, 0.0, 0, &in[3]));
    in[4] = opt->step, in[5] = opt->learning_rate;
    TRY(dlrt_graph_op(graph, "adam_update", NULL, in, 6, attrs, 1, outs, 3, &num_outputs));
    TRY(dlrt_graph_assign(graph, params[k], outs[0]));
    TRY(dlrt_graph_assign(graph, in[2], outs[1]));
    TRY(dlrt_graph_assign(graph, in[3], outs[2]));
  }
  return NULL;
}

/* Run the sampling executable on its fixed codes and return the mean and the (population)
 * standard deviation of its NUM_SAMPLES outputs, computed on the host in double. */
static dlrt_status* sample_stats(dlrt_executable* sample, dlrt_tensor* samples_t, double* mean,
                                 double* std) {
  static float xs[NUM_SAMPLES];
  double sum = 0.0, sq = 0.0;
  int i;
  /* Random ops draw with the executable's run count: resetting it to 0 makes every call draw
   * the same NUM_SAMPLES codes, so the numbers printed during training are comparable (a
   * fixed batch of codes, as the DCGAN sample draws its pictures from). */
  TRY(dlrt_executable_set_run_count(sample, 0));
  TRY(dlrt_executable_run(sample, NULL, 0, &samples_t, 1));
  TRY(dlrt_tensor_read(samples_t, xs, sizeof xs));
  for (i = 0; i < NUM_SAMPLES; ++i) sum += xs[i];
  *mean = sum / NUM_SAMPLES;
  for (i = 0; i < NUM_SAMPLES; ++i) sq += (xs[i] - *mean) * (xs[i] - *mean);
  *std = sqrt(sq / NUM_SAMPLES);
  return NULL;
}

int main(void) {
  /* Everything the program owns starts NULL, so the cleanup can free whatever exists. */
  dlrt_context* ctx = NULL;
  dlrt_graph* graph = NULL;
  dlrt_executable* train = NULL;
  dlrt_executable* sample = NULL;
  dlrt_tensor* real_t = NULL;    /* (BATCH, 1) f32: one batch of real samples, fed every run */
  dlrt_tensor* d_loss_t = NULL;  /* () f32: the discriminator's loss, fetched into it */
  dlrt_tensor* g_loss_t = NULL;  /* () f32: the generator's loss */
  dlrt_tensor* samples_t = NULL; /* (NUM_SAMPLES, 1) f32: the sampling step's output */
  int rc = 1;

  static float real_batch[BATCH];
  uint32_t data_state = 42u; /* the real data's stream */
  size_t device = 0;
  dlrt_device_info info;
  dlrt_status* status = NULL;
  generator gen;
  discriminator disc;
  adam d_opt, g_opt;
  dlrt_value real, z, fake, real_logits, fake_logits, d_real_loss, d_fake_loss, d_loss, g_loss;
  dlrt_value z_fixed, generated, fetches[2];
  dlrt_compile_options options;
  double mean = 0.0, std = 0.0;
  float d_loss_value = 0.0f, g_loss_value = 0.0f;
  int finite = 1;
  int steps_done = 0, i;

  /* 1. The context (plugins from the default search; DLRT_PLUGIN_OPTIONS such as
   * "cpu:threads=1" apply) and the best device: the first GPU, else the first CPU. */
  CHECK(dlrt_context_create(NULL, &ctx));
  printf("gan_c: dlrt %s, %u devices\n", dlrt_version(), (unsigned)dlrt_context_device_count(ctx));
  status = dlrt_context_find_device(ctx, "gpu", &device);
  if (status != NULL && dlrt_status_code(status) == DLRT_NOT_FOUND) {
    dlrt_status_free(status);
    status = dlrt_context_find_device(ctx, "cpu", &device);
  }
  CHECK(status);
  memset(&info, 0, sizeof info);
  info.struct_size = DLRT_STRUCT_SIZE(dlrt_device_info);
  CHECK(dlrt_context_device_info(ctx, device, &info)); /* strings owned by the context */
  printf("gan_c: device %s (%s, plugin %s)\n", info.name, info.model, info.plugin);

  /* 2.-5. The graph, every node requesting the chosen device. */
  CHECK(dlrt_graph_create(ctx, &graph));
  CHECK(dlrt_graph_push_device(graph, info.name));
  {
    const dlrt_tensor_desc real_desc = make_desc(DLRT_F32, 2, BATCH, 1);
    const int64_t z_shape[2] = {BATCH, NOISE};
    const int64_t z_fixed_shape[2] = {NUM_SAMPLES, NOISE};
    dlrt_attr z_attrs[2];
    const dlrt_attr* z_attr_ptrs[2];
    dlrt_value g_params[4], d_params[4], in[2];
    const char* g_names[4];
    const char* d_names[4];

    /* The models' variables, each layer with its own init seed. */
    CHECK(dense_create(graph, "generator/dense", NOISE, HIDDEN, 1, &gen.hidden));
    CHECK(dense_create(graph, "generator/dense_1", HIDDEN, 1, 2, &gen.out));
    CHECK(dense_create(graph, "discriminator/dense", 1, HIDDEN, 3, &disc.hidden));
    CHECK(dense_create(graph, "discriminator/dense_1", HIDDEN, 1, 4, &disc.out));

    /* The step's inputs: a real batch fed from the host, and noise drawn in the graph. The
     * noise op's seed fixes its stream; the run count advances it, so run k of the training
     * executable draws the k-th batch of codes on every device and in every process. */
    CHECK(dlrt_graph_placeholder(graph, "real", &real_desc, &real));
    z_attrs[0] = attr_ints("shape", z_shape, 2);
    z_attrs[1] = attr_int("seed", 7);
    z_attr_ptrs[0] = &z_attrs[0], z_attr_ptrs[1] = &z_attrs[1];
    CHECK(add_op(graph, "random_normal", NULL, 0, z_attr_ptrs, 2, &z));

    /* The forward pass, once: fake = G(z); D on both batches (the same variables twice). */
    CHECK(generator_apply(graph, &gen, z, &fake));
    CHECK(discriminator_apply(graph, &disc, real, &real_logits));
    CHECK(discriminator_apply(graph, &disc, fake, &fake_logits));

    /* The losses. D: real is labelled 1, fake 0. G (the non-saturating loss): its fakes
     * labelled 1, i.e. G gains when D calls them real. At the equilibrium, where D cannot
     * tell them apart (D = 1/2 everywhere), d_loss = 2 ln 2 = 1.386 and g_loss = ln 2 =
     * 0.693; a D that wins drives d_loss down and g_loss up. */
    CHECK(bce_mean(graph, real_logits, 1, &d_real_loss));
    CHECK(bce_mean(graph, fake_logits, 0, &d_fake_loss));
    in[0] = d_real_loss, in[1] = d_fake_loss;
    CHECK(add_op(graph, "add", in, 2, NULL, 0, &d_loss));
    CHECK(bce_mean(graph, fake_logits, 1, &g_loss));

    /* Two optimizers, two losses, two variable lists: Adam(2e-3, beta_1 0.5) each (the DCGAN
     * tutorial's beta_1; a larger rate than its 2e-4, for a 2000-step run). */
    CHECK(adam_create(graph, "d_opt", 2e-3f, 0.5, &d_opt));
    CHECK(adam_create(graph, "g_opt", 2e-3f, 0.5, &g_opt));
    d_params[0] = disc.hidden.kernel, d_names[0] = disc.hidden.kernel_name;
    d_params[1] = disc.hidden.bias, d_names[1] = disc.hidden.bias_name;
    d_params[2] = disc.out.kernel, d_names[2] = disc.out.kernel_name;
    d_params[3] = disc.out.bias, d_names[3] = disc.out.bias_name;
    g_params[0] = gen.hidden.kernel, g_names[0] = gen.hidden.kernel_name;
    g_params[1] = gen.hidden.bias, g_names[1] = gen.hidden.bias_name;
    g_params[2] = gen.out.kernel, g_names[2] = gen.out.kernel_name;
    g_params[3] = gen.out.bias, g_names[3] = gen.out.bias_name;
    CHECK(adam_minimize(graph, &d_opt, d_loss, d_params, d_names, 4));
    CHECK(adam_minimize(graph, &g_opt, g_loss, g_params, g_names, 4));

    /* Sampling: the generator once more, on NUM_SAMPLES codes of a stream of their own. */
    z_attrs[0] = attr_ints("shape", z_fixed_shape, 2);
    z_attrs[1] = attr_int("seed", 8);
    CHECK(add_op(graph, "random_normal", NULL, 0, z_attr_ptrs, 2, &z_fixed));
    CHECK(generator_apply(graph, &gen, z_fixed, &generated));
  }
  CHECK(dlrt_graph_pop_device(graph));

  /* 6. Two executables of the one graph, sharing its variables. The training step computes
   * both losses and both gradient sets from the values the variables hold when the run
   * starts, and applies every assign (both optimizers' updates and counters) at its end: one
   * forward pass, simultaneous updates, as TensorFlow's DCGAN tutorial's train_step. */
  fetches[0] = d_loss, fetches[1] = g_loss;
  dlrt_compile_options_init(&options);
  options.run_assigns = 1;
  CHECK(dlrt_graph_compile(graph, &real, 1, fetches, 2, &options, &train));
  options.run_assigns = 0; /* sampling reads the generator, changes nothing, needs no feed */
  CHECK(dlrt_graph_compile(graph, NULL, 0, &generated, 1, &options, &sample));

  /* Device tensors for the feed and the fetches, made once and reused by every run; the
   * caller owns them (dlrt_tensor_destroy, before the context). */
  {
    const dlrt_tensor_desc real_desc = make_desc(DLRT_F32, 2, BATCH, 1);
    const dlrt_tensor_desc scalar = make_desc(DLRT_F32, 0, 0, 0);
    const dlrt_tensor_desc samples_desc = make_desc(DLRT_F32, 2, NUM_SAMPLES, 1);
    CHECK(dlrt_tensor_create(ctx, device, &real_desc, &real_t));
    CHECK(dlrt_tensor_create(ctx, device, &scalar, &d_loss_t));
    CHECK(dlrt_tensor_create(ctx, device, &scalar, &g_loss_t));
    CHECK(dlrt_tensor_create(ctx, device, &samples_desc, &samples_t));
  }

  CHECK(sample_stats(sample, samples_t, &mean, &std));
  printf("gan_c: before training: generated mean %.3f std %.3f (real: %.2f, %.2f)\n", mean, std,
         REAL_MEAN, REAL_STD);

  /* The training loop: a fresh real batch per step from the host stream, one run per step. */
  while (finite && steps_done < STEPS) {
    const dlrt_tensor* run_feeds[1];
    dlrt_tensor* run_fetches[2];
    for (i = 0; i < BATCH; ++i)
      real_batch[i] = (float)(REAL_MEAN + REAL_STD * lcg_normal(&data_state));
    CHECK(dlrt_tensor_write(real_t, real_batch, sizeof real_batch));
    run_feeds[0] = real_t;
    run_fetches[0] = d_loss_t, run_fetches[1] = g_loss_t; /* in the order given to compile */
    CHECK(dlrt_executable_run(train, run_feeds, 1, run_fetches, 2));
    CHECK(dlrt_tensor_read(d_loss_t, &d_loss_value, sizeof d_loss_value));
    CHECK(dlrt_tensor_read(g_loss_t, &g_loss_value, sizeof g_loss_value));
    ++steps_done;
    /* x - x == 0 is false for NaN and for +-inf. */
    if (!(d_loss_value - d_loss_value == 0.0f && g_loss_value - g_loss_value == 0.0f)) finite = 0;
    if (steps_done % LOG_EVERY == 0 || steps_done == 1) {
      CHECK(sample_stats(sample, samples_t, &mean, &std));
      printf("gan_c: step %4d d_loss %.4f g_loss %.4f generated mean %.3f std %.3f\n", steps_done,
             d_loss_value, g_loss_value, mean, std);
    }
  }

  CHECK(sample_stats(sample, samples_t, &mean, &std));
  printf("gan_c: after %d steps: %d generated samples have mean %.3f std %.3f\n", steps_done,
         NUM_SAMPLES, mean, std);

  /* The verdict. */
  if (!finite) {
    fprintf(stderr, "gan_c: FAILED: a loss is not finite at step %d (d_loss %g, g_loss %g)\n",
            steps_done, d_loss_value, g_loss_value);
  } else if (!(fabs(mean - REAL_MEAN) < MEAN_TOLERANCE)) {
    fprintf(stderr, "gan_c: FAILED: generated mean %.3f, expected %.2f +- %.2f\n", mean, REAL_MEAN,
            MEAN_TOLERANCE);
  } else if (!(std >= STD_LOW && std <= STD_HIGH)) {
    fprintf(stderr, "gan_c: FAILED: generated std %.3f, expected within [%.2f, %.2f]\n", std,
            STD_LOW, STD_HIGH);
  } else {
    printf("gan_c: passed\n");
    rc = 0;
  }

cleanup:
  /* 7. Free in dependency order: tensors and executables before their graph, the graph
   * before the context. Every destroy function accepts NULL. */
  dlrt_tensor_destroy(samples_t);
  dlrt_tensor_destroy(g_loss_t);
  dlrt_tensor_destroy(d_loss_t);
  dlrt_tensor_destroy(real_t);
  dlrt_executable_destroy(sample);
  dlrt_executable_destroy(train);
  dlrt_graph_destroy(graph);
  dlrt_context_destroy(ctx);
  return rc;
}
