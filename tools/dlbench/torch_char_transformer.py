#!/usr/bin/python3
"""torch_char_transformer.py: the PyTorch twin of dlrt's character-level Transformer,
timed the way `dlbench train` times dlrt, so `dlbench train --compare-torch` can print the ratio.

Model (GPT-style, pre-norm; must stay exactly what the C++ model builds):
  V = 256 byte values, context T (--context, 128), width d (--d-model, 128), h heads
  (--heads, 4; head_dim = d / h), L blocks (--layers, 4), MLP hidden 4d.
    x = tok_emb[ids] + pos_emb[0..T)                        (B, T, d)
    per block:  a = LN1(x)
                q, k, v = a Wq + bq, a Wk + bk, a Wv + bv   three separate (d, d) maps
                (B, T, d) -> (B, h, T, dh); o = scaled_dot_product_attention(q, k, v,
                is_causal=True) (scale 1/sqrt(dh)); (B, h, T, dh) -> (B, T, d)
                x = x + o Wo + bo
                m = LN2(x); x = x + gelu_erf(m W1 + b1) W2 + b2      W1 (d, 4d), W2 (4d, d)
    logits = LN_f(x) Wh + bh                                 untied head (d, V)
  LayerNorm eps 1e-5, no dropout.
  Init as Keras' defaults: every linear weight glorot (xavier) uniform, biases zero, both
  embedding tables uniform(-0.05, 0.05), LayerNorm gamma 1 and beta 0; torch.manual_seed(--seed)
  before the parameters are made, in the order of the name list below.
  Loss: mean cross-entropy over all B*T positions (nats); bits/char = nats / ln 2.
  Optimizer: AdamW(lr 1e-3, betas (0.9, 0.999), eps 1e-7, weight decay 0.004: Keras' AdamW
  defaults), decay on every parameter as Keras does without exclusions; gradients clipped to
  global norm 1.0 (--clip-norm, 0 = off) before each step, as Keras' global_clipnorm.
  One difference is PyTorch's own: torch adds eps to sqrt(v_hat) while Keras adds it to
  sqrt(v) before the bias correction; at eps 1e-7 the two differ only when v is ~1e-14.

Data (as dlrt's sdk/include/dlrt/nn/text_data.hpp, TextCorpus::read and split): --data is a
file or a folder; a folder is read as its regular files in byte order of their names,
skipping symlinks, hidden files (".x") and "*.dat", concatenated as bytes (sub-folders are not
entered). The first round(0.9 * size) bytes train, the rest validate. Training windows: B
offsets drawn uniformly from [0, size_train - T - 1] per step by a torch.Generator seeded with
--seed (torch.randint), x = bytes[o:o+T], y = bytes[o+1:o+T+1]. Validation: the first
--val-windows windows at offsets 0, T, 2T, ... of the validation part (as
TextCorpus::sequential_windows), evaluated in batches of B, the loss averaged over every
position.

Timing: --warmup-steps untimed training steps first (allocator, kernel selection and, with
--compile, torch.compile's compilation), then --steps timed steps; tokens_per_second =
steps * B * T / seconds of those steps (wall clock, each step ends with loss.item(), so the
work is done). The warm-up steps train the model too. Prints one JSON object on stdout.

--dump-step DIR: no training; writes, for the model at init (torch.manual_seed(--seed)):
  DIR/weights.safetensors  every parameter, f32, named below
  DIR/batch.safetensors    "x" and "y", int64 (B, T): the first batch of the seeded sampler
  DIR/grads.safetensors    d(loss)/d(parameter) on that batch (no clipping), same names/shapes
and prints the loss on that batch in the JSON. Linear weights are stored as (in, out), Keras'
kernel layout (the transpose of nn.Linear.weight); the rest as the model holds them.
Parameter names (i = 0 .. L-1), with shapes:
  tok_emb                  (256, d)
  pos_emb                  (T, d)
  block{i}/ln1/gamma       (d,)        block{i}/ln1/beta     (d,)
  block{i}/wq/kernel       (d, d)      block{i}/wq/bias      (d,)
  block{i}/wk/kernel       (d, d)      block{i}/wk/bias      (d,)
  block{i}/wv/kernel       (d, d)      block{i}/wv/bias      (d,)
  block{i}/wo/kernel       (d, d)      block{i}/wo/bias      (d,)
  block{i}/ln2/gamma       (d,)        block{i}/ln2/beta     (d,)
  block{i}/w1/kernel       (d, 4d)     block{i}/w1/bias      (4d,)
  block{i}/w2/kernel       (4d, d)     block{i}/w2/bias      (d,)
  ln_f/gamma               (d,)        ln_f/beta             (d,)
  head/kernel              (d, 256)    head/bias             (256,)
The files are written with the safetensors package when the interpreter has it, else by
hand in the same format (8-byte little-endian header length, a JSON header padded with
spaces to a multiple of 8, then the raw little-endian data).

Debian: apt-get install python3-torch; or a venv with torch from PyPI (dlbench --torch-venv).
"""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dlbench_twin_io import save_safetensors  # noqa: E402

VOCAB = 256
VAL_FRACTION = 0.1


# --- data -----------------------------------------------------------------------------------

def read_corpus(path):
    """The bytes of a file, or of a folder's files as TextCorpus::read takes them."""
    if not os.path.exists(path):
        raise SystemExit(f"--data {path}: does not exist")
    if not os.path.isdir(path):
        with open(path, "rb") as f:
            data = f.read()
        if not data:
            raise SystemExit(f"--data {path}: is empty; expected at least one byte")
        return data
    names = []
    for name in os.listdir(path):
        full = os.path.join(path, name)
        if name.startswith(".") or (len(name) > 4 and name.endswith(".dat")):
            continue
        if os.path.islink(full) or not os.path.isfile(full):
            continue
        names.append(full)
    # std::sort of std::string compares bytes: sort by the UTF-8 (filesystem) encoding.
    names.sort(key=os.fsencode)
    parts = []
    for full in names:
        with open(full, "rb") as f:
            parts.append(f.read())
    data = b"".join(parts)
    if not data:
        raise SystemExit(f"--data {path}: holds no non-empty regular file")
    return data


def split(data, fraction=VAL_FRACTION):
    """(train, validation) as TextCorpus::split: cut = round((1 - f) * size), half up."""
    cut = int(len(data) * (1.0 - fraction) + 0.5)
    if cut == 0 or cut >= len(data):
        raise SystemExit(f"{len(data)} bytes are too few to split at {fraction}")
    return data[:cut], data[cut:]


class Sampler:
    """B uniform window offsets per call from [0, n - T - 1], from a seeded torch.Generator."""

    def __init__(self, torch, data, T, B, seed):
        self.torch = torch
        self.data = torch.frombuffer(bytearray(data), dtype=torch.uint8).long()
        if self.data.numel() < T + 1:
            raise SystemExit(f"the training part has {self.data.numel()} bytes, fewer than T+1")
        self.T, self.B = T, B
        self.gen = torch.Generator().manual_seed(seed)
        self.steps = torch.arange(T)

    def batch(self):
        torch = self.torch
        starts = torch.randint(0, self.data.numel() - self.T, (self.B,), generator=self.gen)
        at = starts[:, None] + self.steps[None, :]  # (B, T)
        return self.data[at], self.data[at + 1]


def sequential_windows(torch, data, T, limit):
    """The first `limit` windows (0: all) at offsets 0, T, 2T, ... as (x, y) int64 (n, T)."""
    t = torch.frombuffer(bytearray(data), dtype=torch.uint8).long()
    n = (t.numel() - 1) // T
    if limit > 0:
        n = min(n, limit)
    if n < 1:
        raise SystemExit(f"the validation part has {t.numel()} bytes, fewer than T+1")
    at = (torch.arange(n) * T)[:, None] + torch.arange(T)[None, :]
    return t[at], t[at + 1]


# --- model ----------------------------------------------------------------------------------

def build_model(torch, T, d, heads, layers):
    nn = torch.nn
    F = torch.nn.functional
    if d % heads != 0:
        raise SystemExit(f"--d-model {d} is not a multiple of --heads {heads}")

    def linear(i, o):
        m = nn.Linear(i, o)
        nn.init.xavier_uniform_(m.weight)  # glorot uniform: limit sqrt(6 / (in + out))
        nn.init.zeros_(m.bias)
        return m

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d, eps=1e-5)
            self.wq, self.wk, self.wv, self.wo = (linear(d, d) for _ in range(4))
            self.ln2 = nn.LayerNorm(d, eps=1e-5)
            self.w1 = linear(d, 4 * d)
            self.w2 = linear(4 * d, d)

        def forward(self, x):
            B, T_, _ = x.shape
            a = self.ln1(x)

            def split_heads(t):  # (B, T, d) -> (B, h, T, dh)
                return t.view(B, T_, heads, d // heads).transpose(1, 2)

            q, k, v = split_heads(self.wq(a)), split_heads(self.wk(a)), split_heads(self.wv(a))
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            o = o.transpose(1, 2).reshape(B, T_, d)  # merge heads
            x = x + self.wo(o)
            m = self.ln2(x)
            return x + self.w2(F.gelu(self.w1(m), approximate="none"))

    class CharTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_emb = nn.Parameter(torch.empty(VOCAB, d).uniform_(-0.05, 0.05))
            self.pos_emb = nn.Parameter(torch.empty(T, d).uniform_(-0.05, 0.05))
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln_f = nn.LayerNorm(d, eps=1e-5)
            self.head = linear(d, VOCAB)

        def forward(self, ids):  # (B, T) int64 -> (B, T, V) logits
            x = self.tok_emb[ids] + self.pos_emb[: ids.shape[1]]
            for b in self.blocks:
                x = b(x)
            return self.head(self.ln_f(x))

    return CharTransformer()


def named_params(model):
    """[(documented name, tensor in the documented layout, is_linear_weight)]: the name list
    in the module docstring; nn.Linear weights (out, in) become (in, out) kernels."""
    out = [("tok_emb", model.tok_emb, False), ("pos_emb", model.pos_emb, False)]

    def linear(prefix, m):
        out.append((prefix + "/kernel", m.weight, True))
        out.append((prefix + "/bias", m.bias, False))

    def norm(prefix, m):
        out.append((prefix + "/gamma", m.weight, False))
        out.append((prefix + "/beta", m.bias, False))

    for i, b in enumerate(model.blocks):
        p = f"block{i}"
        norm(p + "/ln1", b.ln1)
        for name in ("wq", "wk", "wv", "wo"):
            linear(f"{p}/{name}", getattr(b, name))
        norm(p + "/ln2", b.ln2)
        linear(p + "/w1", b.w1)
        linear(p + "/w2", b.w2)
    norm("ln_f", model.ln_f)
    linear("head", model.head)
    return out


# --- safetensors ----------------------------------------------------------------------------

# --- run ------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/usr/share/games/fortunes")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: every core)")
    ap.add_argument("--steps", type=int, default=200, help="timed training steps")
    ap.add_argument("--warmup-steps", type=int, default=20, help="untimed steps first")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--context", type=int, default=128, help="T")
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--beta1", type=float, default=0.9)
    ap.add_argument("--beta2", type=float, default=0.999)
    ap.add_argument("--eps", type=float, default=1e-7)
    ap.add_argument("--weight-decay", type=float, default=0.004)
    ap.add_argument("--clip-norm", type=float, default=1.0, help="global norm (0: no clipping)")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model")
    ap.add_argument("--val-windows", type=int, default=256,
                    help="validation windows from the start of the validation part (0: all)")
    ap.add_argument("--dump-step", metavar="DIR", default="",
                    help="write weights, batch and gradients at init to DIR instead of training")
    args = ap.parse_args()
    for flag in ("steps", "batch", "context", "d_model", "heads", "layers"):
        if getattr(args, flag) < 1:
            raise SystemExit(f"--{flag.replace('_', '-')} is {getattr(args, flag)}; expected >= 1")
    if args.warmup_steps < 0:
        raise SystemExit(f"--warmup-steps is {args.warmup_steps}; expected >= 0")

    try:
        import torch
    except ImportError:
        raise SystemExit("torch_char_transformer.py: PyTorch is missing: apt-get install "
                         "python3-torch")
    F = torch.nn.functional
    threads = args.threads if args.threads > 0 else (os.cpu_count() or 1)
    torch.set_num_threads(threads)

    B, T = args.batch, args.context
    train_bytes, val_bytes = split(read_corpus(args.data))
    torch.manual_seed(args.seed)
    model = build_model(torch, T, args.d_model, args.heads, args.layers)
    sampler = Sampler(torch, train_bytes, T, B, args.seed)
    config = {"vocab": VOCAB, "context": T, "d_model": args.d_model, "heads": args.heads,
              "layers": args.layers, "mlp_hidden": 4 * args.d_model, "batch": B,
              "seed": args.seed, "lr": args.lr, "betas": [args.beta1, args.beta2],
              "eps": args.eps, "weight_decay": args.weight_decay, "clip_norm": args.clip_norm,
              "compile": args.compile, "data": args.data, "train_bytes": len(train_bytes),
              "val_bytes": len(val_bytes),
              "parameters": sum(p.numel() for p in model.parameters())}
    doc = {"framework": "pytorch", "model": "char_transformer", "torch_version": torch.__version__,
           "threads": threads, "config": config}

    def loss_of(net, x, y):
        logits = net(x)
        return F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))  # mean over B*T

    if args.dump_step:
        os.makedirs(args.dump_step, exist_ok=True)
        params = named_params(model)
        weights = {n: (p.t() if lin else p) for n, p, lin in params}
        writer = save_safetensors(torch, weights, os.path.join(args.dump_step,
                                                               "weights.safetensors"))
        x, y = sampler.batch()
        save_safetensors(torch, {"x": x, "y": y}, os.path.join(args.dump_step,
                                                               "batch.safetensors"))
        loss = loss_of(model, x, y)
        loss.backward()
        grads = {n: (p.grad.t() if lin else p.grad) for n, p, lin in params}
        save_safetensors(torch, grads, os.path.join(args.dump_step, "grads.safetensors"))
        doc.update({"mode": "dump-step", "dir": args.dump_step, "writer": writer,
                    "names": [n for n, _, _ in params], "loss": loss.item(),
                    "bits_per_char": loss.item() / math.log(2)})
        print(json.dumps(doc))
        return 0

    net = torch.compile(model) if args.compile else model
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(args.beta1, args.beta2),
                            eps=args.eps, weight_decay=args.weight_decay)

    def step():
        x, y = sampler.batch()
        opt.zero_grad(set_to_none=True)
        loss = loss_of(net, x, y)
        loss.backward()
        if args.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_norm)
        opt.step()
        return loss.item()

    t0 = time.perf_counter()
    for _ in range(args.warmup_steps):
        step()
    warmup_seconds = time.perf_counter() - t0
    losses = []
    t0 = time.perf_counter()
    for _ in range(args.steps):
        losses.append(step())
    seconds = time.perf_counter() - t0

    # Validation in batches of B on the uncompiled module (a compiled one would recompile for
    # the last partial batch; the numbers are the same).
    vx, vy = sequential_windows(torch, val_bytes, T, args.val_windows)
    total = 0.0
    t_val = time.perf_counter()
    with torch.no_grad():
        for s in range(0, vx.shape[0], B):
            total += float(loss_of(model, vx[s:s + B], vy[s:s + B])) * vx[s:s + B].numel()
    val_seconds = time.perf_counter() - t_val
    val_loss = total / vx.numel()
    tail = losses[-min(20, len(losses)):]
    train_loss = sum(tail) / len(tail)
    doc.update({
        "mode": "train",
        "warmup_steps": args.warmup_steps,
        "steps": args.steps,
        "warmup_seconds": warmup_seconds,
        "seconds": seconds,
        "ms_per_step": seconds / args.steps * 1e3,
        "tokens_per_second": args.steps * B * T / seconds,
        "first_loss": losses[0],
        "last_loss": losses[-1],
        "train_loss": train_loss,  # mean over the last min(20, steps) timed steps
        "train_bits_per_char": train_loss / math.log(2),
        "val_windows": int(vx.shape[0]),
        "val_seconds": val_seconds,
        "val_loss": val_loss,
        "val_bits_per_char": val_loss / math.log(2),
    })
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
