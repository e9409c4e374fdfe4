"""dlbench_twin_io.py: what the PyTorch twins (torch_vae.py, torch_dcgan.py,
torch_char_transformer.py) share: MNIST's idx files and a safetensors writer. It sits next to
them in tools/dlbench and, as dlbench_twin_io.py, next to dlbench in the build and install
trees, so each twin imports it from its own folder."""

import gzip
import json
import os
import struct

IMAGE = 28


def mnist_file(folder, name):
    """folder/name, else folder/name.gz (samples/common/mnist_images.hpp's mnist_file)."""
    for candidate in (os.path.join(folder, name), os.path.join(folder, name + ".gz")):
        if os.path.exists(candidate):
            return candidate
    raise SystemExit(f"--data {folder}: no {name} or {name}.gz there "
                     "(expected MNIST's file layout)")


def read_mnist_u8(path, limit=0):
    """u8 images (N, 28, 28) of an idx3 file (the first `limit` only when > 0): (bytes, N)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        head = f.read(16)
        if len(head) < 16:
            raise SystemExit(f"{path}: too short for an idx header")
        magic, n, rows, cols = struct.unpack(">IIII", head)
        if magic != 0x00000803:
            raise SystemExit(f"{path}: magic {magic:#010x}; expected 0x00000803 (u8, rank 3)")
        if (rows, cols) != (IMAGE, IMAGE):
            raise SystemExit(f"{path}: images of {rows}x{cols}; expected 28x28")
        if limit > 0:
            n = min(n, limit)
        data = f.read(n * IMAGE * IMAGE)
    if len(data) != n * IMAGE * IMAGE:
        raise SystemExit(f"{path}: ends after {len(data)} bytes of image data; expected "
                         f"{n * IMAGE * IMAGE}")
    return data, n


def save_safetensors(torch, tensors, path):
    """{name: tensor} -> a .safetensors file (the package when present, else by hand)."""
    tensors = {k: v.detach().contiguous().cpu() for k, v in tensors.items()}
    try:
        from safetensors.torch import save_file
    except ImportError:
        save_file = None
    if save_file is not None:
        save_file(tensors, path)
        return "safetensors package"
    dtypes = {torch.float32: ("F32", "<f4"), torch.int64: ("I64", "<i8")}
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):  # the package orders the data by name as well
        t = tensors[name]
        tag = dtypes[t.dtype][0]
        raw = t.numpy().astype(dtypes[t.dtype][1], copy=False).tobytes()
        header[name] = {"dtype": tag, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)
    return "by hand"
