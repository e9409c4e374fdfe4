#!/usr/bin/python3
"""torch_dcgan.py: the PyTorch twin of dlrt's DCGAN (samples/dcgan, dcgan_models.hpp), timed
step by step, and with --dump-step the reference the C++ twin test checks dlrt's steps against.

Models (Keras semantics, NHWC in dlrt; reproduced here in torch's NCHW; must stay exactly what
samples/dcgan/dcgan_models.hpp builds):
  generator      z (B, 64) -> Dense(7*7*128, bias) -> BatchNormalization -> LeakyReLU(0.2)
                 -> Reshape(7, 7, 128)  (NHWC order: the Dense's 6272 outputs are h, w, c with
                    c fastest; here viewed as (B, 7, 7, 128) and permuted to (B, 128, 7, 7))
                 -> Conv2DTranspose(64, 4x4, s2, same, no bias) -> BatchNormalization
                 -> LeakyReLU(0.2) -> Conv2DTranspose(1, 4x4, s2, same, bias) -> tanh
                 images (B, 28, 28, 1) in [-1, 1]
  discriminator  x (B, 28, 28, 1) -> Conv2D(64, 4x4, s2, same) -> LeakyReLU(0.2) -> Dropout(0.3)
                 -> Conv2D(128, 4x4, s2, same) -> LeakyReLU(0.2) -> Dropout(0.3)
                 -> Flatten  (NHWC order: (B, 128, 7, 7) permuted to (B, 7, 7, 128) first)
                 -> Dense(1) logit
  Padding. Conv2D 'same', k 4, s 2: 28 -> 14 and 14 -> 7, total pad (out-1)*2 + 4 - in = 2,
  1 before and 1 after (TF's SAME: before = total/2): torch padding=1. Conv2DTranspose 'same',
  k 4, s 2: 7 -> 14 and 14 -> 28 (Keras' deconv_output_length, in*s); of the full
  (in-1)*2 + 4 output (16, 30) dlrt's conv2d_transpose keeps rows [before, before + out) with
  total = full - out = 2, before = 1 (core/ops/infer_conv_transpose.cc, the forward
  convolution's SAME pads), as Keras' JAX backend crops: torch ConvTranspose2d padding=1,
  which drops 1 row/column at each end. No kernel flip: both are the data gradient of conv2d.
  BatchNormalization is Keras' (momentum 0.99 = torch momentum 0.01, epsilon 1e-3, gamma 1,
  beta 0): training normalises with the batch's biased variance; the moving variance follows
  the unbiased one (count/(count-1), count = values per channel: B after the Dense, B*14*14
  after the transposed conv), which is torch's running_var and dlrt's batch_norm_train
  (sdk/include/dlrt/nn/batch_norm.hpp, docs/ops.md; Keras itself follows the biased one).
  Init as Keras' defaults: every kernel glorot (xavier) uniform with Keras' fans (Dense (in,
  out); Conv2D (KH,KW,Ci,Co): fan_in KH*KW*Ci, fan_out KH*KW*Co; Conv2DTranspose (KH,KW,Co,Ci):
  fan_in KH*KW*Co, fan_out KH*KW*Ci, which is what torch's xavier_uniform_ computes from
  ConvTranspose2d's (Ci,Co,KH,KW) weight too), biases zero; torch.manual_seed(--seed) before
  the models are made, the kernels then initialised in the order of the name list below.

Step (the TensorFlow DCGAN tutorial's two tapes, as dcgan.cc's nn::TrainStep):
  z = torch.randn(B, 64); fake = G(z); real_logits = D(x); fake_logits = D(fake) (D called
  twice: independent Dropout masks); d_loss = BCE_logits(real_logits, 1) + BCE_logits(
  fake_logits, 0), each a mean over the batch; g_loss = BCE_logits(fake_logits, 1). Both updates
  come from this one forward pass at the pre-update weights: D's gradients d(d_loss)/d(D's
  parameters), G's d(g_loss)/d(G's parameters) (torch.autograd.grad on each), then one
  Adam(lr 2e-4, betas (0.5, 0.999), eps 1e-7) per model. G's BatchNormalization moves its
  moving statistics once per step (G runs once). One difference is PyTorch's own: torch adds
  eps to sqrt(v_hat) while Keras adds it to sqrt(v) before the bias correction; at eps 1e-7 the
  two differ only when v is ~1e-14.

Data: --data holds train-images-idx3-ubyte (or .gz; the plain file first, as dcgan.cc), u8
(N, 28, 28); images are pixel/127.5 - 1 in f32 (division in f32, as dcgan.cc's load_images).
Timing batches: per epoch a torch.randperm from a torch.Generator seeded with --seed, the last
partial batch dropped (the shuffle is not dlrt's nn::epoch_order; only the cost is compared).

Timing: --warmup-steps untimed steps first (allocator, kernel selection and, with --compile,
torch.compile's compilation), then --steps timed steps, each timed by itself (wall clock; a step
ends with both losses' .item(), so its work is done). ms_per_step is the median of those;
images_per_second = B / that median. --channels-last keeps both models' conv weights and the
4-D activations in torch.channels_last. Prints one JSON object on stdout.

--dump-step DIR: Dropout rate 0 (the C++ test builds the discriminator with dropout 0, so both
sides compute the same), no timing; writes, for the models at init (torch.manual_seed(--seed)):
  DIR/weights.safetensors  every parameter and BatchNormalization's moving statistics, f32,
                           named below, in dlrt's layouts
  DIR/batches.safetensors  x0 .. x{S-1} (B, 28, 28, 1) f32 NHWC: the first S = --steps batches
                           of the training set in file order; z0 .. z{S-1} (B, 64) f32: the
                           codes torch.randn drew for those steps
  DIR/losses.txt           one line per step, "d_loss g_loss" (Python repr of the f32 values),
                           computed before that step's updates
then runs the S steps (each on x_s, z_s) and prints the losses in the JSON. Names and shapes
(dlrt's: model name / layer name / variable; Keras' kernel layouts):
  generator/dense/kernel                          (64, 6272)   nn.Linear.weight.T
  generator/dense/bias                            (6272,)
  generator/batch_normalization/gamma             (6272,)      also beta, moving_mean,
                                                               moving_variance (6272,)
  generator/conv2d_transpose/kernel               (4, 4, 64, 128)  ConvTranspose2d.weight
                                                               (Ci,Co,KH,KW).permute(2,3,1,0)
  generator/batch_normalization_1/gamma           (64,)        also beta, moving_mean,
                                                               moving_variance (64,)
  generator/conv2d_transpose_1/kernel             (4, 4, 1, 64)
  generator/conv2d_transpose_1/bias               (1,)
  discriminator/conv2d/kernel                     (4, 4, 1, 64)    Conv2d.weight
                                                               (Co,Ci,KH,KW).permute(2,3,1,0)
  discriminator/conv2d/bias                       (64,)
  discriminator/conv2d_1/kernel                   (4, 4, 64, 128)
  discriminator/conv2d_1/bias                     (128,)
  discriminator/dense/kernel                      (6272, 1)    rows in NHWC flatten order
  discriminator/dense/bias                        (1,)
The files are written with the safetensors package when the interpreter has it, else by
hand in the same format (8-byte little-endian header length, a JSON header padded with
spaces to a multiple of 8, then the raw little-endian data).

Debian: apt-get install python3-torch; or a venv with torch from PyPI (dlbench --torch-venv).
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dlbench_twin_io import mnist_file, read_mnist_u8, save_safetensors  # noqa: E402

IMAGE = 28
BASE = 7          # the generator's first feature map: 7x7x128
BASE_CHANNELS = 128


# --- data -----------------------------------------------------------------------------------

def to_unit_range(torch, pixels):
    """u8 images (..., 28, 28, 1) -> f32, pixel/127.5 - 1 with an f32 division (a table of the
    256 values: a tensor divisor, so torch does not multiply by a rounded reciprocal)."""
    levels = torch.arange(256, dtype=torch.float32)
    table = levels / torch.full((256,), 127.5) - 1.0
    return table[pixels.long()]


# --- models ---------------------------------------------------------------------------------

def build_models(torch, noise, dropout):
    nn = torch.nn
    F = torch.nn.functional
    flat = BASE * BASE * BASE_CHANNELS

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.dense = nn.Linear(noise, flat, bias=True)
            self.bn0 = nn.BatchNorm1d(flat, eps=1e-3, momentum=0.01)
            self.up0 = nn.ConvTranspose2d(BASE_CHANNELS, 64, 4, stride=2, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(64, eps=1e-3, momentum=0.01)
            self.up1 = nn.ConvTranspose2d(64, 1, 4, stride=2, padding=1, bias=True)
            self.memory_format = torch.contiguous_format

        def forward(self, z):  # (B, noise) -> (B, 1, 28, 28)
            h = F.leaky_relu(self.bn0(self.dense(z)), 0.2)
            h = h.view(-1, BASE, BASE, BASE_CHANNELS).permute(0, 3, 1, 2)  # Keras' Reshape
            h = h.contiguous(memory_format=self.memory_format)
            h = F.leaky_relu(self.bn1(self.up0(h)), 0.2)
            return torch.tanh(self.up1(h))

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv0 = nn.Conv2d(1, 64, 4, stride=2, padding=1)
            self.conv1 = nn.Conv2d(64, 128, 4, stride=2, padding=1)
            self.drop = nn.Dropout(dropout)
            self.dense = nn.Linear(flat, 1)

        def forward(self, x):  # (B, 1, 28, 28) -> (B, 1) logits
            h = self.drop(F.leaky_relu(self.conv0(x), 0.2))
            h = self.drop(F.leaky_relu(self.conv1(h), 0.2))
            h = h.permute(0, 2, 3, 1).reshape(h.shape[0], -1)  # Keras' Flatten of NHWC
            return self.dense(h)

    gen, disc = Generator(), Discriminator()
    # Keras' defaults, in the documented name order.
    for m in (gen.dense, gen.up0, gen.up1, disc.conv0, disc.conv1, disc.dense):
        nn.init.xavier_uniform_(m.weight)
        if m.bias is not None:
            nn.init.zeros_(m.bias)
    return gen, disc


def conv_kernel(w):
    """Conv2d (Co,Ci,KH,KW) -> (KH,KW,Ci,Co); ConvTranspose2d (Ci,Co,KH,KW) -> (KH,KW,Co,Ci)."""
    return w.permute(2, 3, 1, 0)


def named_tensors(gen, disc):
    """[(dlrt name, tensor in dlrt's layout)]: the name list in the module docstring."""
    out = []

    def bn(prefix, m):
        out.extend([(prefix + "/gamma", m.weight), (prefix + "/beta", m.bias),
                    (prefix + "/moving_mean", m.running_mean),
                    (prefix + "/moving_variance", m.running_var)])

    out.append(("generator/dense/kernel", gen.dense.weight.t()))
    out.append(("generator/dense/bias", gen.dense.bias))
    bn("generator/batch_normalization", gen.bn0)
    out.append(("generator/conv2d_transpose/kernel", conv_kernel(gen.up0.weight)))
    bn("generator/batch_normalization_1", gen.bn1)
    out.append(("generator/conv2d_transpose_1/kernel", conv_kernel(gen.up1.weight)))
    out.append(("generator/conv2d_transpose_1/bias", gen.up1.bias))
    out.append(("discriminator/conv2d/kernel", conv_kernel(disc.conv0.weight)))
    out.append(("discriminator/conv2d/bias", disc.conv0.bias))
    out.append(("discriminator/conv2d_1/kernel", conv_kernel(disc.conv1.weight)))
    out.append(("discriminator/conv2d_1/bias", disc.conv1.bias))
    out.append(("discriminator/dense/kernel", disc.dense.weight.t()))
    out.append(("discriminator/dense/bias", disc.dense.bias))
    return out


# --- safetensors ----------------------------------------------------------------------------

# --- run ------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: every core)")
    ap.add_argument("--steps", type=int, default=50,
                    help="timed training steps (--dump-step: steps written, 3)")
    ap.add_argument("--warmup-steps", type=int, default=5, help="untimed steps first")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--noise", type=int, default=64, help="the generator's code dimensions")
    ap.add_argument("--limit", type=int, default=0,
                    help="read the first N training images only (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--beta1", type=float, default=0.5)
    ap.add_argument("--beta2", type=float, default=0.999)
    ap.add_argument("--eps", type=float, default=1e-7)
    ap.add_argument("--dropout", type=float, default=0.3,
                    help="the discriminator's Dropout rate (--dump-step uses 0)")
    ap.add_argument("--compile", action="store_true", help="torch.compile both models")
    ap.add_argument("--channels-last", action="store_true",
                    help="conv weights and 4-D activations in torch.channels_last")
    ap.add_argument("--dump-step", metavar="DIR", default="",
                    help="write weights at init, --steps batches and their losses to DIR "
                         "instead of timing")
    args = ap.parse_args()
    for flag in ("steps", "batch", "noise"):
        if getattr(args, flag) < 1:
            raise SystemExit(f"--{flag} is {getattr(args, flag)}; expected >= 1")
    if args.warmup_steps < 0:
        raise SystemExit(f"--warmup-steps is {args.warmup_steps}; expected >= 0")
    if not 0.0 <= args.dropout < 1.0:
        raise SystemExit(f"--dropout is {args.dropout}; expected 0 <= rate < 1")

    try:
        import torch
    except ImportError:
        raise SystemExit("torch_dcgan.py: PyTorch is missing: apt-get install python3-torch")
    F = torch.nn.functional
    threads = args.threads if args.threads > 0 else (os.cpu_count() or 1)
    torch.set_num_threads(threads)

    B = args.batch
    dump = bool(args.dump_step)
    dropout = 0.0 if dump else args.dropout
    path = mnist_file(args.data, "train-images-idx3-ubyte")
    raw, n = read_mnist_u8(path, B * args.steps if dump else args.limit)
    if n < B * (args.steps if dump else 1):
        raise SystemExit(f"{path}: {n} images, fewer than the {B * (args.steps if dump else 1)} "
                         "needed")
    # u8 (N, 28, 28, 1) NHWC; each batch becomes f32 when it is taken
    pixels = torch.frombuffer(bytearray(raw), dtype=torch.uint8).reshape(n, IMAGE, IMAGE, 1)

    torch.manual_seed(args.seed)
    gen, disc = build_models(torch, args.noise, dropout)
    fmt = torch.channels_last if args.channels_last else torch.contiguous_format
    if args.channels_last:
        gen.to(memory_format=fmt)
        disc.to(memory_format=fmt)
        gen.memory_format = fmt
    gen.train()
    disc.train()
    g_params, d_params = list(gen.parameters()), list(disc.parameters())
    config = {"noise": args.noise, "batch": B, "seed": args.seed, "lr": args.lr,
              "betas": [args.beta1, args.beta2], "eps": args.eps, "dropout": dropout,
              "bn_momentum_keras": 0.99, "bn_epsilon": 1e-3, "compile": args.compile,
              "channels_last": args.channels_last, "data": path, "images": n,
              "generator_parameters": sum(p.numel() for p in g_params),
              "discriminator_parameters": sum(p.numel() for p in d_params)}
    doc = {"framework": "pytorch", "model": "dcgan", "torch_version": torch.__version__,
           "threads": threads, "config": config}

    if args.compile:
        # D's fake branch is differentiated twice (d_loss, then g_loss: retain_graph), which
        # AOTAutograd's donated buffers refuse.
        import torch._functorch.config
        torch._functorch.config.donated_buffer = False
    g_net = torch.compile(gen) if args.compile else gen
    d_net = torch.compile(disc) if args.compile else disc
    g_opt = torch.optim.Adam(g_params, lr=args.lr, betas=(args.beta1, args.beta2), eps=args.eps)
    d_opt = torch.optim.Adam(d_params, lr=args.lr, betas=(args.beta1, args.beta2), eps=args.eps)

    def nchw(x):  # (B, 28, 28, 1) NHWC -> (B, 1, 28, 28) in the chosen memory format
        return x.permute(0, 3, 1, 2).contiguous(memory_format=fmt)

    def step(x, z):
        """One step on NHWC images x and codes z; returns (d_loss, g_loss) before the updates."""
        fake = g_net(z)
        real_logits, fake_logits = d_net(nchw(x)), d_net(fake)
        d_loss = (F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
                  + F.binary_cross_entropy_with_logits(fake_logits,
                                                       torch.zeros_like(fake_logits)))
        g_loss = F.binary_cross_entropy_with_logits(fake_logits, torch.ones_like(fake_logits))
        d_grads = torch.autograd.grad(d_loss, d_params, retain_graph=True)
        g_grads = torch.autograd.grad(g_loss, g_params)
        for p, g in zip(d_params, d_grads):
            p.grad = g
        for p, g in zip(g_params, g_grads):
            p.grad = g
        d_opt.step()
        g_opt.step()
        return d_loss.item(), g_loss.item()

    if dump:
        os.makedirs(args.dump_step, exist_ok=True)
        named = named_tensors(gen, disc)
        writer = save_safetensors(torch, dict(named),
                                  os.path.join(args.dump_step, "weights.safetensors"))
        batches, losses = {}, []
        for s in range(args.steps):
            x = to_unit_range(torch, pixels[s * B:(s + 1) * B])
            z = torch.randn(B, args.noise)
            batches[f"x{s}"], batches[f"z{s}"] = x, z
            losses.append(step(x, z))
        save_safetensors(torch, batches, os.path.join(args.dump_step, "batches.safetensors"))
        with open(os.path.join(args.dump_step, "losses.txt"), "w") as f:
            for d_loss, g_loss in losses:
                f.write(f"{d_loss!r} {g_loss!r}\n")
        doc.update({"mode": "dump-step", "dir": args.dump_step, "writer": writer,
                    "steps": args.steps, "names": [name for name, _ in named],
                    "d_loss": [d for d, _ in losses], "g_loss": [g for _, g in losses]})
        print(json.dumps(doc))
        return 0

    per_epoch = n // B
    shuffle = torch.Generator().manual_seed(args.seed)
    state = {"order": None, "at": per_epoch}

    def next_batch():
        if state["at"] == per_epoch:
            state["order"], state["at"] = torch.randperm(n, generator=shuffle), 0
        rows = state["order"][state["at"] * B:(state["at"] + 1) * B]
        state["at"] += 1
        return to_unit_range(torch, pixels[rows])

    t0 = time.perf_counter()
    for _ in range(args.warmup_steps):
        step(next_batch(), torch.randn(B, args.noise))
    warmup_seconds = time.perf_counter() - t0
    times, losses = [], []
    for _ in range(args.steps):
        x = next_batch()  # the gather and the codes are outside the timed part
        z = torch.randn(B, args.noise)
        t = time.perf_counter()
        losses.append(step(x, z))
        times.append(time.perf_counter() - t)
    median = statistics.median(times)
    doc.update({
        "mode": "train",
        "warmup_steps": args.warmup_steps,
        "steps": args.steps,
        "warmup_seconds": warmup_seconds,
        "seconds": sum(times),
        "ms_per_step": median * 1e3,  # the median
        "ms_per_step_mean": sum(times) / len(times) * 1e3,
        "ms_per_step_min": min(times) * 1e3,
        "images_per_second": B / median,
        "first_d_loss": losses[0][0], "first_g_loss": losses[0][1],
        "last_d_loss": losses[-1][0], "last_g_loss": losses[-1][1],
    })
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
