/* samples/embed_c/main.c: train a small classifier from plain C99 through dlrt.h alone.
 *
 * What an engineer embedding dlrt in a C program copies. It shows, in order:
 *   1. a context (the plugins found by the default search) and the choice of a device: the
 *      first GPU, else the first CPU;
 *   2. a data set in host memory: three seeded, separable clusters of 2-D points;
 *   3. a graph: placeholders, variables with seeded init ops, a two-layer MLP, a loss, its
 *      gradients and SGD updates assigned back to the variables;
 *   4. two executables of that one graph, sharing its variables: a training step (run_assigns
 *      1) and an evaluation step (run_assigns 0, which changes no variable);
 *   5. the training loop: host batches copied into device tensors, one run per step;
 *   6. cleanup in the order the API requires: tensors, executables, graph, context.
 *
 * Every call that can fail returns a dlrt_status* (NULL = OK); CHECK prints its code and
 * message, frees it and jumps to the cleanup. The program exits 0 only if the loss fell and
 * the final accuracy is at least 0.95, so its CTest (sample_embed_c) can fail.
 */
#include <stdio.h>
#include <string.h>

#include "dlrt/dlrt.h"

enum {
  NUM_CLASSES = 3,
  POINTS_PER_CLASS = 100,
  NUM_POINTS = NUM_CLASSES * POINTS_PER_CLASS,
  BATCH = 60, /* NUM_POINTS / BATCH batches per epoch; BATCH divides NUM_POINTS */
  NUM_BATCHES = NUM_POINTS / BATCH,
  HIDDEN = 16,
  STEPS = 300,
  LOG_EVERY = 50
};

/* On failure: say which call failed, its code name and its message; free the status (the
 * caller owns it) and leave through `cleanup`, where everything made so far is freed. */
#define CHECK(expr)                                                                        \
  do {                                                                                     \
    dlrt_status* status_ = (expr);                                                         \
    if (status_ != NULL) {                                                                 \
      fprintf(stderr, "embed_c: FAILED: %s:%d: %s\n  %s: %s\n", __FILE__, __LINE__, #expr, \
              dlrt_code_name(dlrt_status_code(status_)), dlrt_status_message(status_));    \
      dlrt_status_free(status_);                                                           \
      goto cleanup;                                                                        \
    }                                                                                      \
  } while (0)

/* ---- a tiny deterministic generator: the same data on every machine, no rand() ---------- */

static uint32_t lcg_next(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u; /* Numerical Recipes' LCG, mod 2^32 */
  return *state;
}

/* Uniform in [lo, hi): the top 24 bits, which are the LCG's best ones. */
static float lcg_uniform(uint32_t* state, float lo, float hi) {
  return lo + (hi - lo) * (float)(lcg_next(state) >> 8) / 16777216.0f;
}

/* Point i belongs to class i % 3 (so every batch holds every class) and lies within 0.8 (per
 * coordinate) of its class's centre; the centres sit 3.46 apart on a circle of radius 2, so
 * the classes are separable. xs is (NUM_POINTS, 2) row-major, labels (NUM_POINTS). */
static void make_data(uint32_t seed, float* xs, int32_t* labels) {
  static const float centres[NUM_CLASSES][2] = {{2.0f, 0.0f}, {-1.0f, 1.732f}, {-1.0f, -1.732f}};
  uint32_t state = seed;
  int i;
  for (i = 0; i < NUM_POINTS; ++i) {
    const int k = i % NUM_CLASSES;
    xs[2 * i + 0] = centres[k][0] + lcg_uniform(&state, -0.8f, 0.8f);
    xs[2 * i + 1] = centres[k][1] + lcg_uniform(&state, -0.8f, 0.8f);
    labels[i] = k;
  }
}

/* ---- small builders for the API's versioned structs ------------------------------------- */

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

/* Attributes point at caller-owned strings (here: literals); the API copies what it keeps. */
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

/* A trainable weight drawn from U(-limit, limit) by a random_uniform init op with its own
 * seed: the variable's first value depends on these attributes only, on every device. The
 * init op's "shape" and "dtype" come from the descriptor. */
static dlrt_status* add_uniform_variable(dlrt_graph* graph, const char* name,
                                         const dlrt_tensor_desc* desc, int64_t seed, double limit,
                                         dlrt_value* out) {
  const dlrt_attr a[3] = {attr_float("minval", -limit), attr_float("maxval", limit),
                          attr_int("seed", seed)};
  const dlrt_attr* attrs[3] = {&a[0], &a[1], &a[2]};
  return dlrt_graph_variable(graph, name, desc, "random_uniform", attrs, 3, 1, out);
}

/* A variable filled with zeros: biases (trainable) and SGD's velocity slots (not). */
static dlrt_status* add_zero_variable(dlrt_graph* graph, const char* name,
                                      const dlrt_tensor_desc* desc, int32_t trainable,
                                      dlrt_value* out) {
  const dlrt_attr value = attr_float("value", 0.0);
  const dlrt_attr* attrs[1] = {&value};
  return dlrt_graph_variable(graph, name, desc, "fill", attrs, 1, trainable, out);
}

/* One op with one output; `inputs`/`attrs` are only read during the call. */
static dlrt_status* add_op(dlrt_graph* graph, const char* op, const char* name,
                           const dlrt_value* inputs, size_t num_inputs,
                           const dlrt_attr* const* attrs, size_t num_attrs, dlrt_value* out) {
  size_t num_outputs = 0;
  return dlrt_graph_op(graph, op, name, inputs, num_inputs, attrs, num_attrs, out, 1, &num_outputs);
}

/* SGD with momentum for one parameter: a velocity slot shaped like it (named
 * `velocity_name`), sgd_update(param, grad, velocity, learning_rate) -> (param', velocity'),
 * and both results assigned back. Assigning an optimizer update to its own inputs makes it run
 * in place. The learning rate is an f32 scalar input (here a constant; a variable written
 * between runs would give a schedule). */
static dlrt_status* add_sgd(dlrt_graph* graph, dlrt_value param, dlrt_value grad,
                            const char* velocity_name) {
  dlrt_tensor_desc desc = make_desc(DLRT_F32, 0, 1, 1);
  dlrt_value velocity = DLRT_INVALID_VALUE;
  dlrt_tensor_desc scalar = make_desc(DLRT_F32, 0, 0, 0);
  const float learning_rate = 0.02f;
  dlrt_value inputs[4];
  dlrt_value outputs[2];
  size_t num_outputs = 0;
  const dlrt_attr momentum = attr_float("momentum", 0.9);
  const dlrt_attr* attrs[1] = {&momentum};
  dlrt_status* status = dlrt_graph_value_desc(graph, param, &desc);
  if (status == NULL) status = add_zero_variable(graph, velocity_name, &desc, 0, &velocity);
  if (status == NULL)
    status =
        dlrt_graph_constant(graph, "", &scalar, &learning_rate, sizeof learning_rate, &inputs[3]);
  if (status != NULL) return status;
  inputs[0] = param;
  inputs[1] = grad;
  inputs[2] = velocity;
  status = dlrt_graph_op(graph, "sgd_update", NULL, inputs, 4, attrs, 1, outputs, 2, &num_outputs);
  if (status == NULL) status = dlrt_graph_assign(graph, param, outputs[0]);
  if (status == NULL) status = dlrt_graph_assign(graph, velocity, outputs[1]);
  return status;
}

/* Copy batch `b` of the host data into the device tensors x (BATCH,2) and labels (BATCH). */
static dlrt_status* write_batch(dlrt_tensor* x, dlrt_tensor* labels, const float* xs,
                                const int32_t* ys, int b) {
  dlrt_status* status = dlrt_tensor_write(x, xs + (size_t)b * BATCH * 2, sizeof(float) * BATCH * 2);
  if (status != NULL) return status;
  return dlrt_tensor_write(labels, ys + (size_t)b * BATCH, sizeof(int32_t) * BATCH);
}

/* Run the evaluation executable over every batch: the fraction of points classified right. */
static dlrt_status* evaluate(dlrt_executable* eval, dlrt_tensor* x, dlrt_tensor* labels,
                             dlrt_tensor* count, const float* xs, const int32_t* ys,
                             double* out_accuracy) {
  const dlrt_tensor* feeds[2];
  double correct = 0.0;
  int b;
  feeds[0] = x;
  feeds[1] = labels;
  *out_accuracy = 0.0;
  for (b = 0; b < NUM_BATCHES; ++b) {
    float batch_correct = 0.0f;
    dlrt_status* status = write_batch(x, labels, xs, ys, b);
    /* `count` is preallocated, so the run writes into it and allocates nothing. */
    if (status == NULL) status = dlrt_executable_run(eval, feeds, 2, &count, 1);
    if (status == NULL) status = dlrt_tensor_read(count, &batch_correct, sizeof batch_correct);
    if (status != NULL) return status;
    correct += batch_correct;
  }
  *out_accuracy = correct / NUM_POINTS;
  return NULL;
}

int main(void) {
  /* Everything the program owns starts NULL, so the cleanup can free whatever exists. */
  dlrt_context* ctx = NULL;
  dlrt_graph* graph = NULL;
  dlrt_executable* train = NULL;
  dlrt_executable* eval = NULL;
  dlrt_tensor* x_t = NULL;     /* (BATCH, 2) f32: one batch of points, fed every run */
  dlrt_tensor* y_t = NULL;     /* (BATCH) i32: their labels */
  dlrt_tensor* loss_t = NULL;  /* () f32: the training step's loss, fetched into it */
  dlrt_tensor* count_t = NULL; /* () f32: the evaluation step's number of correct points */
  int rc = 1;

  static float xs[NUM_POINTS * 2];
  static int32_t ys[NUM_POINTS];
  size_t device = 0;
  dlrt_device_info info;
  dlrt_status* status = NULL;
  dlrt_value x, labels, w1, b1, w2, b2, hidden, logits, xent[2], loss, pred, correct;
  dlrt_value params[4], grads[4], feeds[2];
  dlrt_compile_options options;
  double accuracy_before = 0.0, accuracy = 0.0;
  float first_loss = 0.0f, last_loss = 0.0f;
  int step;

  /* 1. The context: NULL options = defaults (plugins from DLRT_PLUGIN_PATH, the install and
   * the build tree; options from DLRT_PLUGIN_OPTIONS, e.g. "cpu:threads=1"). */
  CHECK(dlrt_context_create(NULL, &ctx));
  printf("embed_c: dlrt %s, %u devices\n", dlrt_version(),
         (unsigned)dlrt_context_device_count(ctx));

  /* The best device: the first GPU if there is one (NOT_FOUND otherwise), else the first CPU.
   * Any other error (say, a malformed spec) is a real one. */
  status = dlrt_context_find_device(ctx, "gpu", &device);
  if (status != NULL && dlrt_status_code(status) == DLRT_NOT_FOUND) {
    dlrt_status_free(status);
    status = dlrt_context_find_device(ctx, "cpu", &device);
  }
  CHECK(status);
  memset(&info, 0, sizeof info);
  info.struct_size = DLRT_STRUCT_SIZE(dlrt_device_info);
  CHECK(dlrt_context_device_info(ctx, device, &info)); /* strings owned by the context */
  printf("embed_c: device %s (%s, plugin %s)\n", info.name, info.model, info.plugin);

  /* 2. The data, in host memory. */
  make_data(42u, xs, ys);

  /* 3. The graph. Everything below requests the chosen device (a device scope, as
   * TensorFlow's `with tf.device(...)`). Values are small integers valid for this graph. */
  CHECK(dlrt_graph_create(ctx, &graph));
  CHECK(dlrt_graph_push_device(graph, info.name));
  {
    const dlrt_tensor_desc x_desc = make_desc(DLRT_F32, 2, BATCH, 2);
    const dlrt_tensor_desc labels_desc = make_desc(DLRT_I32, 1, BATCH, 0);
    const dlrt_tensor_desc w1_desc = make_desc(DLRT_F32, 2, 2, HIDDEN);
    const dlrt_tensor_desc b1_desc = make_desc(DLRT_F32, 1, HIDDEN, 0);
    const dlrt_tensor_desc w2_desc = make_desc(DLRT_F32, 2, HIDDEN, NUM_CLASSES);
    const dlrt_tensor_desc b2_desc = make_desc(DLRT_F32, 1, NUM_CLASSES, 0);
    const dlrt_attr relu = attr_string("activation", "relu");
    const dlrt_attr none = attr_string("activation", "none");
    const dlrt_attr* relu_attrs[1] = {&relu};
    const dlrt_attr* none_attrs[1] = {&none};
    dlrt_value in[3];
    size_t n = 0;

    CHECK(dlrt_graph_placeholder(graph, "x", &x_desc, &x));
    CHECK(dlrt_graph_placeholder(graph, "labels", &labels_desc, &labels));
    /* Glorot-uniform limits sqrt(6 / (fan_in + fan_out)): 0.58 for W1, 0.56 for W2. */
    CHECK(add_uniform_variable(graph, "W1", &w1_desc, 1, 0.58, &w1));
    CHECK(add_zero_variable(graph, "b1", &b1_desc, 1, &b1));
    CHECK(add_uniform_variable(graph, "W2", &w2_desc, 2, 0.56, &w2));
    CHECK(add_zero_variable(graph, "b2", &b2_desc, 1, &b2));

    /* hidden (BATCH,HIDDEN) = relu(x·W1 + b1); logits (BATCH,K) = hidden·W2 + b2. */
    in[0] = x, in[1] = w1, in[2] = b1;
    CHECK(add_op(graph, "matmul_bias_act", "hidden", in, 3, relu_attrs, 1, &hidden));
    in[0] = hidden, in[1] = w2, in[2] = b2;
    CHECK(add_op(graph, "matmul_bias_act", "logits", in, 3, none_attrs, 1, &logits));

    /* sparse_softmax_cross_entropy has two outputs: the per-row loss (BATCH) and its
     * backprop (BATCH,K), which autodiff reuses. The loss is their mean, a scalar. */
    in[0] = logits, in[1] = labels;
    CHECK(
        dlrt_graph_op(graph, "sparse_softmax_cross_entropy", "xent", in, 2, NULL, 0, xent, 2, &n));
    CHECK(add_op(graph, "reduce_mean", "loss", &xent[0], 1, NULL, 0, &loss));

    /* Gradients of the loss w.r.t. the four variables, as ops of the same graph, then one
     * SGD update per variable, assigned back (a training executable applies the assigns). */
    params[0] = w1, params[1] = b1, params[2] = w2, params[3] = b2;
    CHECK(dlrt_graph_gradients(graph, loss, params, 4, grads));
    CHECK(add_sgd(graph, w1, grads[0], "W1/velocity"));
    CHECK(add_sgd(graph, b1, grads[1], "b1/velocity"));
    CHECK(add_sgd(graph, w2, grads[2], "W2/velocity"));
    CHECK(add_sgd(graph, b2, grads[3], "b2/velocity"));

    /* Evaluation: pred (BATCH) i32 = argmax over classes; correct () f32 = #(pred == label). */
    CHECK(add_op(graph, "argmax", "pred", &logits, 1, NULL, 0, &pred));
    in[0] = pred, in[1] = labels;
    CHECK(add_op(graph, "equal_count", "correct", in, 2, NULL, 0, &correct));
  }
  CHECK(dlrt_graph_pop_device(graph));

  /* 4. Two executables of the one graph. They share its variables: the evaluation step sees
   * what the training step wrote. Compiling places the variables and runs their init ops. */
  feeds[0] = x, feeds[1] = labels;
  dlrt_compile_options_init(&options);
  options.run_assigns = 1; /* training: apply every assign at the end of each run */
  CHECK(dlrt_graph_compile(graph, feeds, 2, &loss, 1, &options, &train));
  options.run_assigns = 0; /* evaluation: read the variables, change none */
  CHECK(dlrt_graph_compile(graph, feeds, 2, &correct, 1, &options, &eval));

  /* Device tensors for the feeds and fetches, made once and reused by every run. The caller
   * owns them (dlrt_tensor_destroy, before the context). */
  {
    const dlrt_tensor_desc x_desc = make_desc(DLRT_F32, 2, BATCH, 2);
    const dlrt_tensor_desc labels_desc = make_desc(DLRT_I32, 1, BATCH, 0);
    const dlrt_tensor_desc scalar = make_desc(DLRT_F32, 0, 0, 0);
    CHECK(dlrt_tensor_create(ctx, device, &x_desc, &x_t));
    CHECK(dlrt_tensor_create(ctx, device, &labels_desc, &y_t));
    CHECK(dlrt_tensor_create(ctx, device, &scalar, &loss_t));
    CHECK(dlrt_tensor_create(ctx, device, &scalar, &count_t));
  }

  CHECK(evaluate(eval, x_t, y_t, count_t, xs, ys, &accuracy_before));
  printf("embed_c: accuracy before training %.3f\n", accuracy_before);

  /* 5. Training: one batch per step, cycling through the data set. */
  for (step = 0; step < STEPS; ++step) {
    const dlrt_tensor* run_feeds[2];
    run_feeds[0] = x_t; /* in the order the feeds were given to compile */
    run_feeds[1] = y_t;
    CHECK(write_batch(x_t, y_t, xs, ys, step % NUM_BATCHES));
    CHECK(dlrt_executable_run(train, run_feeds, 2, &loss_t, 1));
    CHECK(dlrt_tensor_read(loss_t, &last_loss, sizeof last_loss));
    if (step == 0) first_loss = last_loss;
    if (step % LOG_EVERY == 0 || step == STEPS - 1)
      printf("embed_c: step %3d loss %.4f\n", step, last_loss);
  }

  CHECK(evaluate(eval, x_t, y_t, count_t, xs, ys, &accuracy));
  printf("embed_c: accuracy after %d steps %.3f\n", STEPS, accuracy);

  /* The verdict. `last_loss == last_loss` is false for NaN. */
  if (!(last_loss == last_loss && last_loss < 0.5f * first_loss)) {
    fprintf(stderr, "embed_c: FAILED: loss went from %.4f to %.4f, expected it to halve\n",
            first_loss, last_loss);
  } else if (!(accuracy >= 0.95)) {
    fprintf(stderr, "embed_c: FAILED: accuracy %.3f, expected >= 0.95\n", accuracy);
  } else {
    printf("embed_c: passed\n");
    rc = 0;
  }

cleanup:
  /* 6. Free in dependency order: tensors and executables before their graph, the graph
   * before the context. Every destroy function accepts NULL. */
  dlrt_tensor_destroy(count_t);
  dlrt_tensor_destroy(loss_t);
  dlrt_tensor_destroy(y_t);
  dlrt_tensor_destroy(x_t);
  dlrt_executable_destroy(eval);
  dlrt_executable_destroy(train);
  dlrt_graph_destroy(graph);
  dlrt_context_destroy(ctx);
  return rc;
}
