#!/usr/bin/python3
"""torch_reference.py: the reference workload (docs/design.md section 9) in PyTorch, timed the way
`dlbench train` times dlrt, so `dlbench train --compare-torch` can print the ratio.

Same model (Conv2D(32,3x3,relu) -> MaxPool2 -> Conv2D(64,3x3,relu) -> MaxPool2 ->
Conv2D(64,3x3,relu) -> Flatten -> Dense(64,relu) -> Dense(10)), same data (the IDX files,
gzip or not, scaled to [0,1]), batch 64, Adam(1e-3, eps 1e-7 as Keras), sparse categorical
cross-entropy from logits, the same thread count (torch.set_num_threads). PyTorch runs with
its default kernels in the layout --memory-format names (auto: NCHW for the CNN,
channels-last for ResNet-20; dlbench runs both and keeps the faster); the data set is one
in-memory tensor and each batch is gathered from it by index, as dlrt gathers batches on the
device.

Timing: `--warmup-steps` untimed steps first (allocator and kernel selection warm), then
each epoch is timed as a whole (every batch of the shuffled training set, the last one
partial, as Keras does), and the validation pass over the test set (no_grad) separately.
Prints one JSON object on stdout. Debian: apt-get install python3-torch; or a venv with
torch from PyPI (dlbench --compare-torch --torch-venv DIR sets one up).

--model resnet20: the twin of samples/resnet/resnet20.hpp — stem Conv3x3(16)-BN-ReLU, 3
stages x 3 basic blocks (16/32/64, stride 2 + 1x1 conv-BN projection at the start of stages
2 and 3), global average pooling, Linear(64, 10) logits; the convs have no bias (a BatchNorm2d
follows each, as in torchvision's ResNets), the linear layer's is zeros, kernels kaiming_normal_(fan_in, relu) = N(0,
sqrt(2/fan_in)) as dlrt's he_normal; BatchNorm2d(eps=1e-3, momentum=0.01), Keras' epsilon
and PyTorch's side of Keras' momentum 0.99; Adam(1e-3, eps 1e-7); batch as given (dlbench
passes 128). It runs channels-last by default (torch.channels_last memory format for the model
and each batch), PyTorch's fast CPU layout for convolutions with batch norm, the layout dlrt
uses.
"""
import argparse
import gzip
import json
import os
import statistics
import struct
import sys
import time


def read_idx(path):
    """An IDX file (plain or .gz) as (dims, bytes)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype, rank = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        raise SystemExit(f"{path}: not an IDX file of unsigned bytes (magic {zero:#x} {dtype:#x})")
    dims = struct.unpack(">" + "I" * rank, data[4:4 + 4 * rank])
    return dims, data[4 + 4 * rank:]


def find(folder, stem):
    for name in (stem, stem + ".gz"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            return path
    raise SystemExit(f"{folder}: neither {stem} nor {stem}.gz exists")


def load(torch, folder, split, limit):
    img_dims, img = read_idx(find(folder, f"{split}-images-idx3-ubyte"))
    lab_dims, lab = read_idx(find(folder, f"{split}-labels-idx1-ubyte"))
    n = img_dims[0] if limit <= 0 else min(limit, img_dims[0])
    x = torch.frombuffer(bytearray(img), dtype=torch.uint8)[: n * 28 * 28]
    x = x.reshape(n, 1, 28, 28).float().div_(255.0)
    y = torch.frombuffer(bytearray(lab), dtype=torch.uint8)[:n].long()
    return x, y


def model(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(64, 64, 3), nn.ReLU(),
        nn.Flatten(), nn.Linear(576, 64), nn.ReLU(), nn.Linear(64, 10))


def resnet20(torch):
    nn = torch.nn

    def conv(ci, co, k, stride):
        # No bias: a BatchNorm2d follows every conv (samples/resnet/resnet20.hpp).
        c = nn.Conv2d(ci, co, k, stride=stride, padding=k // 2, bias=False)
        nn.init.kaiming_normal_(c.weight, mode="fan_in", nonlinearity="relu")
        return c

    def bn(c):
        return nn.BatchNorm2d(c, eps=1e-3, momentum=0.01)

    class Block(nn.Module):
        def __init__(self, ci, co, stride):
            super().__init__()
            self.body = nn.Sequential(conv(ci, co, 3, stride), bn(co), nn.ReLU(),
                                      conv(co, co, 3, 1), bn(co))
            project = stride != 1 or ci != co
            self.shortcut = nn.Sequential(conv(ci, co, 1, stride), bn(co)) if project else None

        def forward(self, x):
            s = x if self.shortcut is None else self.shortcut(x)
            return torch.relu(self.body(x) + s)

    layers = [conv(1, 16, 3, 1), bn(16), nn.ReLU()]
    ci = 16
    for stage, co in enumerate((16, 32, 64)):
        for block in range(3):
            layers.append(Block(ci, co, 2 if stage > 0 and block == 0 else 1))
            ci = co
    head = nn.Linear(64, 10)
    nn.init.kaiming_normal_(head.weight, mode="fan_in", nonlinearity="relu")
    nn.init.zeros_(head.bias)
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), head]
    return nn.Sequential(*layers)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: every core)")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--warmup-steps", type=int, default=20)
    ap.add_argument("--limit", type=int, default=0, help="use only the first N training images")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--model", choices=("cnn", "resnet20"), default="cnn")
    ap.add_argument("--memory-format", choices=("auto", "channels_last", "contiguous"),
                    default="auto",
                    help="the model's and batches' layout (auto: channels_last for resnet20, "
                         "contiguous NCHW for cnn)")
    ap.add_argument("--precision", choices=("f32", "bf16", "f16"), default="f32",
                    help="bf16/f16: the forward pass under torch.autocast('cpu') to that dtype "
                         "(PyTorch's mixed precision: f32 weights and optimizer)")
    ap.add_argument("--compile", action="store_true",
                    help="torch.compile the model (PyTorch >= 2.0; its compilation happens in "
                         "the warm-up steps, which are not timed)")
    args = ap.parse_args()

    try:
        import torch
    except ImportError:
        raise SystemExit("torch_reference.py: PyTorch is missing: apt-get install python3-torch")
    threads = args.threads if args.threads > 0 else (os.cpu_count() or 1)
    torch.set_num_threads(threads)
    torch.manual_seed(args.seed)

    x_train, y_train = load(torch, args.data, "train", args.limit)
    x_test, y_test = load(torch, args.data, "t10k", 0)
    channels_last = args.memory_format == "channels_last" or (
        args.memory_format == "auto" and args.model == "resnet20")
    net = resnet20(torch) if args.model == "resnet20" else model(torch)
    if channels_last:
        net = net.to(memory_format=torch.channels_last)
        x_train = x_train.contiguous(memory_format=torch.channels_last)
        x_test = x_test.contiguous(memory_format=torch.channels_last)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, eps=1e-7)
    train_net = net
    if args.compile:
        if not hasattr(torch, "compile"):
            raise SystemExit(f"torch_reference.py: --compile needs torch.compile (PyTorch >= "
                             f"2.0); this is torch {torch.__version__}")
        train_net = torch.compile(net)  # compiles on the first warm-up step
    loss_fn = torch.nn.CrossEntropyLoss()
    b = args.batch

    autocast_dtype = {"bf16": torch.bfloat16, "f16": torch.float16}.get(args.precision)

    def step(idx):
        opt.zero_grad(set_to_none=True)
        xb = x_train[idx]
        if channels_last:
            xb = xb.contiguous(memory_format=torch.channels_last)
        with torch.autocast("cpu", dtype=autocast_dtype or torch.bfloat16,
                            enabled=autocast_dtype is not None):
            logits = train_net(xb)
            loss = loss_fn(logits.float(), y_train[idx])
        loss.backward()
        opt.step()
        return loss, logits

    warm = torch.randperm(x_train.shape[0])
    for s in range(args.warmup_steps):
        step(warm[(s * b) % x_train.shape[0]:][:b])

    epochs = []
    step_ms = []
    for _ in range(args.epochs):
        perm = torch.randperm(x_train.shape[0])
        total_loss, correct, seen = 0.0, 0, 0
        t0 = time.perf_counter()
        for start in range(0, x_train.shape[0], b):
            s0 = time.perf_counter()
            idx = perm[start:start + b]
            loss, logits = step(idx)
            total_loss += loss.item() * idx.shape[0]
            correct += int((logits.argmax(1) == y_train[idx]).sum())
            seen += idx.shape[0]
            step_ms.append((time.perf_counter() - s0) * 1e3)
        epochs.append(time.perf_counter() - t0)

    net.eval()
    t0 = time.perf_counter()
    val_loss, val_correct = 0.0, 0
    with torch.no_grad():
        for start in range(0, x_test.shape[0], b):
            logits = net(x_test[start:start + b])
            val_loss += float(loss_fn(logits, y_test[start:start + b])) * logits.shape[0]
            val_correct += int((logits.argmax(1) == y_test[start:start + b]).sum())
    val_seconds = time.perf_counter() - t0

    n_train = x_train.shape[0]
    print(json.dumps({
        "framework": "pytorch",
        "model": args.model,
        "memory_format": "channels_last" if channels_last else "contiguous (NCHW)",
        "compile": args.compile,
        "precision": args.precision,
        "torch_version": torch.__version__,
        "threads": threads,
        "epochs": args.epochs,
        "batch": b,
        "train_samples": n_train,
        "warmup_steps": args.warmup_steps,
        "train_seconds_per_epoch": statistics.median(epochs),
        "val_seconds": val_seconds,
        "ms_per_step": statistics.median(step_ms),
        "samples_per_second": n_train / statistics.median(epochs),
        "loss": total_loss / seen,
        "accuracy": correct / seen,
        "val_loss": val_loss / x_test.shape[0],
        "val_accuracy": val_correct / x_test.shape[0],
    }))


if __name__ == "__main__":
    sys.exit(main())
