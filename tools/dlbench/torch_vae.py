#!/usr/bin/python3
"""torch_vae.py: the PyTorch twin of dlrt's convolutional VAE on Fashion-MNIST (samples/vae,
vae_model.hpp), timed the way `dlbench train` times dlrt, so the two can be compared.

Model (must stay exactly what samples/vae/vae_model.hpp builds; dlrt is NHWC as Keras, torch
runs NCHW and reproduces the NHWC semantics):
  encoder  x (28,28,1) -> Conv2D(32, 3x3, stride 2, 'same', relu)
           -> Conv2D(64, 3x3, stride 2, 'same', relu) -> Flatten (NHWC order, (B, 7*7*64))
           -> Dense(latent) = mean, Dense(latent) = log_var
  decoder  z (latent) -> Dense(7*7*32, relu) -> Reshape(7,7,32) (NHWC)
           -> Conv2DTranspose(64, 3x3, s2, 'same', relu) -> Conv2DTranspose(32, 3x3, s2,
           'same', relu) -> Conv2DTranspose(1, 3x3, s1, 'same') = logits (28,28,1)
  TF 'same' with stride 2, k 3 on an even length L pads total (L/2-1)*2+3-L = 1: 0 before,
  1 after (F.pad(x, (0, 1, 0, 1)), then padding 0). Conv2DTranspose 'same' (dlrt's
  conv2d_transpose, docs/ops.md): length H*s; the pads of the forward convolution it is the
  gradient of are total = (H-1)*s + k - H*s, before = total/2, after = the rest, i.e. 0 and 1
  for s 2, k 3: of torch's full (H-1)*2+3 = 2H+1 output (ConvTranspose2d, padding 0) dlrt keeps
  rows and columns 0 .. 2H-1 and drops the last one. With s 1, k 3: before 1, after 1 =
  torch's padding=1. No kernel flip: both are conv2d's gradient wrt its input.
  Loss per image: sum over the 784 pixels of BCE-with-logits(logits, x) plus
  KL = -0.5 * sum(1 + log_var - mean^2 - exp(log_var)); the batch loss is the mean over the
  batch (nats per image, the negative ELBO). x = pixel / 255; z = mean + exp(log_var/2) * eps,
  eps ~ N(0, I) drawn with torch.randn (the global generator) every step.
  Init as Keras' defaults: kernels glorot uniform, limit sqrt(6 / (fan_in + fan_out)) with
  Keras' fans (Conv2D (KH,KW,Ci,Co): KH*KW*Ci, KH*KW*Co; Conv2DTranspose (KH,KW,Co,Ci):
  KH*KW*Co, KH*KW*Ci; Dense (in, out)), biases zero; torch.manual_seed(--seed) before the
  parameters are made, drawn in the order of the name list below.
  Optimizer: Adam(lr 1e-3, betas (0.9, 0.999), eps 1e-7) over both models, in Keras' (and
  dlrt's) form p -= lr*sqrt(1-b2^t)/(1-b1^t) * m / (sqrt(v) + eps): torch.optim.Adam adds eps
  to sqrt(v)/sqrt(1-b2^t) instead, so its eps is set to eps / sqrt(1-b2^t) before each step,
  which makes the two the same update (--torch-eps: torch's own form with the fixed eps).

Data (as samples/vae/vae.cc): --data is a folder with MNIST's idx files
train-images-idx3-ubyte and t10k-images-idx3-ubyte (each may be .gz). Training batches of B
come from a shuffled order, a fresh torch.randperm per epoch from a torch.Generator seeded with
--seed; the last partial batch is dropped. The test value is the negative ELBO per image over
the whole test set (one eps sample per image, as the training loss), in batches of B.

Timing: --warmup-steps untimed training steps first (allocator, kernel selection and, with
--compile, torch.compile's compilation), then --steps timed steps, each timed on its own (it
ends with loss.item(), so the work is done); ms_per_step is their median, steps_per_second
= steps / their summed seconds. The warm-up steps train the model too. --epochs N (> 0)
instead trains N full epochs (no warm-up; every step is timed) and evaluates the test set after
each, printing one progress line per epoch to stderr. Prints one JSON object on stdout.
--compile compiles the loss (forward; backward through AOTAutograd) with torch.compile; the
optimizer step runs eager. --channels-last keeps the model and the images in
torch.channels_last (NHWC in memory), where the NHWC flatten is a view.

--dump-step DIR: no timing; for the model at init (torch.manual_seed(--seed)) writes
  DIR/weights.safetensors  every parameter, f32, in dlrt's names and layouts (below)
then runs --steps Adam steps (eager) on the first --steps batches of the training set in file
order (no shuffle), eps from torch.randn each, and writes
  DIR/batches.safetensors  x0, x1, ... (B,28,28,1) f32 NHWC and eps0, eps1, ... (B, latent) f32
  DIR/losses.txt           the loss of each step (before its update), one per line, repr
Layouts: Dense kernel (in, out) = nn.Linear.weight.T; Conv2D kernel (KH,KW,Ci,Co) = Conv2d
weight (Co,Ci,KH,KW).permute(2,3,1,0); Conv2DTranspose kernel (KH,KW,Co,Ci) = ConvTranspose2d
weight (Ci,Co,KH,KW).permute(2,3,1,0). Names and shapes (latent L = 16):
  encoder/conv2d/kernel              (3,3,1,32)    encoder/conv2d/bias              (32,)
  encoder/conv2d_1/kernel            (3,3,32,64)   encoder/conv2d_1/bias            (64,)
  encoder/dense/kernel               (3136,L)      encoder/dense/bias               (L,)   mean
  encoder/dense_1/kernel             (3136,L)      encoder/dense_1/bias             (L,)   log_var
  decoder/dense/kernel               (L,1568)      decoder/dense/bias               (1568,)
  decoder/conv2d_transpose/kernel    (3,3,64,32)   decoder/conv2d_transpose/bias    (64,)
  decoder/conv2d_transpose_1/kernel  (3,3,32,64)   decoder/conv2d_transpose_1/bias  (32,)
  decoder/conv2d_transpose_2/kernel  (3,3,1,32)    decoder/conv2d_transpose_2/bias  (1,)
The files are written with the safetensors package when the interpreter has it, else by
hand in the same format (8-byte little-endian header length, a JSON header padded with
spaces to a multiple of 8, then the raw little-endian data).

Debian: apt-get install python3-torch; or a venv with torch from PyPI (dlbench --torch-venv).
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dlbench_twin_io import mnist_file, read_mnist_u8, save_safetensors  # noqa: E402

SIDE = 28


# --- data -----------------------------------------------------------------------------------

def read_images(torch, path):
    """An idx3 u8 file (N, 28, 28) -> f32 (N, 1, 28, 28) in [0, 1] (pixel / 255)."""
    raw, n = read_mnist_u8(path)
    t = torch.frombuffer(bytearray(raw), dtype=torch.uint8)
    return t.view(n, 1, SIDE, SIDE).float() / 255.0

# --- model ----------------------------------------------------------------------------------

def build_model(torch, latent):
    nn = torch.nn
    F = torch.nn.functional

    def glorot_(weight, fan_in, fan_out):
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        with torch.no_grad():
            weight.uniform_(-limit, limit)

    class Vae(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc_conv = nn.Conv2d(1, 32, 3, stride=2, padding=0)
            self.enc_conv_1 = nn.Conv2d(32, 64, 3, stride=2, padding=0)
            self.enc_mean = nn.Linear(7 * 7 * 64, latent)
            self.enc_log_var = nn.Linear(7 * 7 * 64, latent)
            self.dec_dense = nn.Linear(latent, 7 * 7 * 32)
            self.dec_up = nn.ConvTranspose2d(32, 64, 3, stride=2, padding=0)
            self.dec_up_1 = nn.ConvTranspose2d(64, 32, 3, stride=2, padding=0)
            self.dec_out = nn.ConvTranspose2d(32, 1, 3, stride=1, padding=1)
            # Keras' init, in the order of the name list (named_params).
            for kind, m in self.layers():
                if kind == "conv2d":  # weight (Co, Ci, KH, KW); Keras (KH, KW, Ci, Co)
                    co, ci, kh, kw = m.weight.shape
                    glorot_(m.weight, kh * kw * ci, kh * kw * co)
                elif kind == "conv2d_transpose":  # weight (Ci, Co, KH, KW); Keras (KH,KW,Co,Ci)
                    ci, co, kh, kw = m.weight.shape
                    glorot_(m.weight, kh * kw * co, kh * kw * ci)
                else:  # Linear weight (out, in)
                    glorot_(m.weight, m.in_features, m.out_features)
                nn.init.zeros_(m.bias)

        def layers(self):
            """[(dlrt layer kind, module)] in the order of the documented names."""
            return [("conv2d", self.enc_conv), ("conv2d", self.enc_conv_1),
                    ("dense", self.enc_mean), ("dense", self.enc_log_var),
                    ("dense", self.dec_dense), ("conv2d_transpose", self.dec_up),
                    ("conv2d_transpose", self.dec_up_1), ("conv2d_transpose", self.dec_out)]

        def encode(self, x):  # (B, 1, 28, 28) -> mean, log_var (B, latent)
            h = F.relu(self.enc_conv(F.pad(x, (0, 1, 0, 1))))  # TF 'same', s 2: 0 before, 1 after
            h = F.relu(self.enc_conv_1(F.pad(h, (0, 1, 0, 1))))
            h = h.permute(0, 2, 3, 1).flatten(1)  # Keras' Flatten of NHWC
            return self.enc_mean(h), self.enc_log_var(h)

        def decode(self, z):  # (B, latent) -> logits (B, 1, 28, 28)
            d = F.relu(self.dec_dense(z))
            d = d.view(-1, 7, 7, 32).permute(0, 3, 1, 2)  # Reshape(7, 7, 32) is NHWC
            d = F.relu(self.dec_up(d)[:, :, :14, :14])  # 'same' s 2: of 15 keep 0..13
            d = F.relu(self.dec_up_1(d)[:, :, :28, :28])
            return self.dec_out(d)

        def forward(self, x, eps):  # -> the negative ELBO per image (B)
            mean, log_var = self.encode(x)
            z = mean + torch.exp(0.5 * log_var) * eps
            logits = self.decode(z)
            rec = F.binary_cross_entropy_with_logits(logits, x, reduction="none").sum((1, 2, 3))
            kl = -0.5 * torch.sum(1.0 + log_var - mean.square() - torch.exp(log_var), dim=1)
            return rec + kl

    return Vae()


def named_params(model):
    """[(documented name, parameter, dlrt layer kind)], in the docstring's order."""
    out = []
    prefixes = ["encoder/conv2d", "encoder/conv2d_1", "encoder/dense", "encoder/dense_1",
                "decoder/dense", "decoder/conv2d_transpose", "decoder/conv2d_transpose_1",
                "decoder/conv2d_transpose_2"]
    for prefix, (kind, m) in zip(prefixes, model.layers()):
        out.append((prefix + "/kernel", m.weight, kind))
        out.append((prefix + "/bias", m.bias, "bias"))
    return out


def to_dlrt_layout(t, kind):
    if kind == "dense":
        return t.t()
    if kind in ("conv2d", "conv2d_transpose"):  # (O,I,KH,KW) / (Ci,Co,KH,KW) -> (KH,KW,..,..)
        return t.permute(2, 3, 1, 0)
    return t


# --- safetensors ----------------------------------------------------------------------------

# --- run ------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: every core)")
    ap.add_argument("--steps", type=int, default=200, help="timed training steps")
    ap.add_argument("--warmup-steps", type=int, default=20, help="untimed steps first")
    ap.add_argument("--epochs", type=int, default=0,
                    help="train this many full epochs instead of --steps (0: off)")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--latent", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--beta1", type=float, default=0.9)
    ap.add_argument("--beta2", type=float, default=0.999)
    ap.add_argument("--eps", type=float, default=1e-7)
    ap.add_argument("--torch-eps", action="store_true",
                    help="torch's Adam epsilon placement instead of Keras'")
    ap.add_argument("--compile", action="store_true", help="torch.compile the loss")
    ap.add_argument("--channels-last", action="store_true",
                    help="model and images in torch.channels_last")
    ap.add_argument("--dump-step", metavar="DIR", default="",
                    help="write weights, batches and losses of --steps steps to DIR")
    args = ap.parse_args()
    for flag in ("steps", "batch", "latent"):
        if getattr(args, flag) < 1:
            raise SystemExit(f"--{flag.replace('_', '-')} is {getattr(args, flag)}; expected >= 1")
    if args.warmup_steps < 0 or args.epochs < 0:
        raise SystemExit("--warmup-steps and --epochs must be >= 0")

    try:
        import torch
    except ImportError:
        raise SystemExit("torch_vae.py: PyTorch is missing: apt-get install python3-torch")
    threads = args.threads if args.threads > 0 else (os.cpu_count() or 1)
    torch.set_num_threads(threads)

    B, L = args.batch, args.latent
    x_train = read_images(torch, mnist_file(args.data, "train-images-idx3-ubyte"))
    x_test = read_images(torch, mnist_file(args.data, "t10k-images-idx3-ubyte"))
    if x_train.shape[0] < B:
        raise SystemExit(f"--batch {B} is more than the {x_train.shape[0]} training images")
    torch.manual_seed(args.seed)
    model = build_model(torch, L)
    params = named_params(model)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(args.beta1, args.beta2),
                           eps=args.eps)
    config = {"latent": L, "batch": B, "seed": args.seed, "lr": args.lr,
              "betas": [args.beta1, args.beta2], "eps": args.eps,
              "eps_form": "torch" if args.torch_eps else "keras", "data": args.data,
              "train_images": int(x_train.shape[0]), "test_images": int(x_test.shape[0]),
              "parameters": sum(p.numel() for p in model.parameters())}
    doc = {"framework": "pytorch", "model": "vae", "torch_version": torch.__version__,
           "threads": threads, "mode": "compile" if args.compile else "eager",
           "channels_last": args.channels_last, "config": config}
    t_adam = [0]

    def adam_step():
        t_adam[0] += 1
        if not args.torch_eps:  # Keras' eps on sqrt(v): torch's eps on sqrt(v_hat) rescaled
            e = args.eps / math.sqrt(1.0 - args.beta2 ** t_adam[0])
            for group in opt.param_groups:
                group["eps"] = e
        opt.step()

    if args.dump_step:
        os.makedirs(args.dump_step, exist_ok=True)
        weights = {n: to_dlrt_layout(p, kind) for n, p, kind in params}
        writer = save_safetensors(torch, weights, os.path.join(args.dump_step,
                                                               "weights.safetensors"))
        batches, losses = {}, []
        for s in range(args.steps):
            x = x_train[s * B:(s + 1) * B]
            eps = torch.randn(x.shape[0], L)
            batches[f"x{s}"] = x.permute(0, 2, 3, 1)  # NHWC (B, 28, 28, 1)
            batches[f"eps{s}"] = eps
            opt.zero_grad(set_to_none=True)
            loss = model(x, eps).mean()
            loss.backward()
            adam_step()
            losses.append(loss.item())
        save_safetensors(torch, batches, os.path.join(args.dump_step, "batches.safetensors"))
        with open(os.path.join(args.dump_step, "losses.txt"), "w") as f:
            for v in losses:
                f.write(repr(v) + "\n")
        doc.update({"mode": "dump-step", "dir": args.dump_step, "writer": writer,
                    "names": [n for n, _, _ in params], "steps": args.steps, "losses": losses})
        print(json.dumps(doc))
        return 0

    fmt = torch.channels_last if args.channels_last else torch.contiguous_format
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
        x_train = x_train.contiguous(memory_format=torch.channels_last)
        x_test = x_test.contiguous(memory_format=torch.channels_last)

    def loss_of(x, eps):
        return model(x, eps).mean()

    loss_fn = torch.compile(loss_of) if args.compile else loss_of
    gen = torch.Generator().manual_seed(args.seed)
    steps_per_epoch = x_train.shape[0] // B

    def batches():  # an endless run of shuffled epochs, the last partial batch dropped
        while True:
            order = torch.randperm(x_train.shape[0], generator=gen)
            for s in range(steps_per_epoch):
                yield x_train[order[s * B:(s + 1) * B]].contiguous(memory_format=fmt)

    def step(x):
        eps = torch.randn(x.shape[0], L)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(x, eps)
        loss.backward()
        adam_step()
        return loss.item()

    def test_neg_elbo():  # the uncompiled model: the last partial batch would recompile
        total = 0.0
        with torch.no_grad():
            for s in range(0, x_test.shape[0], B):
                x = x_test[s:s + B]
                total += float(model(x, torch.randn(x.shape[0], L)).sum())
        return total / x_test.shape[0]

    feed = batches()
    times, losses = [], []

    def timed(x):
        t0 = time.perf_counter()
        v = step(x)
        times.append(time.perf_counter() - t0)
        losses.append(v)

    if args.epochs > 0:
        per_epoch, train_per_epoch = [], []
        t_all = time.perf_counter()
        for epoch in range(args.epochs):
            t0, first = time.perf_counter(), len(losses)
            for _ in range(steps_per_epoch):
                timed(next(feed))
            train_loss = statistics.fmean(losses[first:])
            t_eval = time.perf_counter()
            value = test_neg_elbo()
            per_epoch.append(value)
            train_per_epoch.append(train_loss)
            print(f"epoch {epoch + 1}/{args.epochs}: train loss {train_loss:.4f}, "
                  f"test_neg_elbo {value:.4f}, {t_eval - t0:.1f} s training, "
                  f"{time.perf_counter() - t_eval:.1f} s test, "
                  f"{statistics.median(times[first:]) * 1e3:.2f} ms/step median",
                  file=sys.stderr, flush=True)
        doc.update({"epochs": args.epochs, "steps_per_epoch": steps_per_epoch,
                    "seconds_total": time.perf_counter() - t_all,
                    "train_loss_per_epoch": train_per_epoch,
                    "test_neg_elbo_per_epoch": per_epoch, "test_neg_elbo": per_epoch[-1],
                    "loss": train_per_epoch[-1]})  # the mean train loss of the last epoch
    else:
        t0 = time.perf_counter()
        for _ in range(args.warmup_steps):
            step(next(feed))
        doc["warmup_seconds"] = time.perf_counter() - t0
        for _ in range(args.steps):
            timed(next(feed))
        doc.update({"warmup_steps": args.warmup_steps, "steps": args.steps,
                    "first_loss": losses[0], "last_loss": losses[-1],
                    "loss": statistics.fmean(losses),  # the mean over the timed steps
                    "test_neg_elbo": test_neg_elbo()})
    seconds = sum(times)
    doc.update({"seconds": seconds, "ms_per_step": statistics.median(times) * 1e3,
                "ms_per_step_mean": seconds / len(times) * 1e3,
                "steps_per_second": len(times) / seconds})
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
