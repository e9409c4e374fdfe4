#!/usr/bin/env python3
"""tests/fuzz/make_corpus.py: writes the seed corpus (corpus/idx, corpus/safetensors).

The files are checked in; run this again only to change them. Seeds are small valid files
of each kind (the fuzzers learn the format from them) and a few invalid ones near the edges.
"""
import gzip
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def put(kind, name, data):
    os.makedirs(os.path.join(HERE, "corpus", kind), exist_ok=True)
    with open(os.path.join(HERE, "corpus", kind, name), "wb") as f:
        f.write(data)


def idx(type_code, dims, payload):
    return bytes([0, 0, type_code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + payload


# IDX: one valid file per type, gzipped variants, and a few broken ones.
put("idx", "u8_2x3", idx(0x08, [2, 3], bytes(range(6))))
put("idx", "i8_4", idx(0x09, [4], bytes([0xFF, 0x80, 0x7F, 0x00])))
put("idx", "i32_2x2", idx(0x0C, [2, 2], struct.pack(">4i", -1, 2, 3, 1 << 30)))
put("idx", "f32_3", idx(0x0D, [3], struct.pack(">3f", 1.5, -2.0, 0.0)))
put("idx", "f64_1x1x2", idx(0x0E, [1, 1, 2], struct.pack(">2d", 3.25, -0.5)))
put("idx", "u8_zero_dim", idx(0x08, [0, 28], b""))
put("idx", "u8_4x4.gz", gzip.compress(idx(0x08, [4, 4], bytes(range(16))), mtime=0))
put("idx", "f32_2.gz", gzip.compress(idx(0x0D, [2], struct.pack(">2f", 1.0, 2.0)), mtime=0))
put("idx", "bad_magic", b"PK\x03\x04" + bytes(12))
put("idx", "short_data", idx(0x08, [3, 4], bytes(10)))
put("idx", "i16_2", idx(0x0B, [2], struct.pack(">2h", -2, 258)))
put("idx", "truncated.gz", gzip.compress(idx(0x08, [8], bytes(8)), mtime=0)[:-5])


def st(tensors, metadata=None, pad=True):
    """safetensors bytes for [(name, dtype, shape, data)], as the reference writes them."""
    header, offset, blobs = {}, 0, []
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


# safetensors: the format's test vector, metadata, every dtype, edge shapes, broken headers.
put("safetensors", "test_vector", st([("attn.0", "F32", [1, 2, 3], struct.pack("<6f", *range(6)))]))
put("safetensors", "empty", st([]))
put("safetensors", "metadata", st([("w", "I32", [2, 2], bytes(16))], {"framework": "pt", "step": "7"}))
put("safetensors", "all_dtypes", st([
    ("f32", "F32", [2], bytes(8)), ("f16", "F16", [2], bytes(4)), ("bf16", "BF16", [1], bytes(2)),
    ("f64", "F64", [1], bytes(8)), ("i32", "I32", [1], bytes(4)), ("i64", "I64", [1], bytes(8)),
    ("u8", "U8", [3], b"abc"), ("i8", "I8", [1], b"\xff"), ("b", "BOOL", [2], b"\x01\x00"),
    ("u16", "U16", [1], b"\xff\xff"), ("i16", "I16", [1], b"\x00\x80"), ("u32", "U32", [1], bytes(4)),
    ("u64", "U64", [1], b"\xff" * 8)]))
put("safetensors", "scalar_and_zero", st([("s", "I64", [], bytes(8)), ("z", "F32", [4, 0], b"")]))
put("safetensors", "unpadded", st([("x", "U8", [2], b"hi")], pad=False))
put("safetensors", "bad_offsets", struct.pack("<Q", 60) +
    b'{"a":{"dtype":"I32","shape":[2,2],"data_offsets":[0, 4]}}  ' + bytes(4))
OVERFLOW = b'{"test":{"dtype":"I32","shape":[2,18446744073709551614],"data_offsets":[0,16]}}'
put("safetensors", "overflow", struct.pack("<Q", len(OVERFLOW)) + OVERFLOW + bytes(16))
put("safetensors", "not_json", struct.pack("<Q", 1) + b"{")
