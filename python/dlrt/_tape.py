"""dlrt.GradientTape: records eager ops and differentiates through them.

    x = dlrt.constant(3.0)
    with dlrt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)          # 6.0

What it records: every op of the schema run eagerly while it is active (operators, dlrt.*,
dlrt.raw_ops.*), on Tensors and Variables; trainable Variables are watched automatically, any
other tensor after watch(). gradient() replays the record as a dlrt graph, lets the core's
autodiff (the gradient rules every graph uses) differentiate it, and runs it; the compiled
graph is reused by later tapes that record the same ops on the same shapes (a training
loop compiles once). Nested tapes each see the ops; persistent=True allows several
gradient() calls. Ops that draw random numbers are recorded with the values they drew
(dropout as its input times the mask it drew), so the gradient matches the forward pass.
"""

from __future__ import annotations

from typing import Any, Sequence

from . import _dlrt
from . import _tensor
from ._tensor import Tensor
from ._variable import Variable

_active: list["GradientTape"] = []


def _record(op: str, given: Sequence[Any], read: list[Tensor], attrs: dict | None,
            outputs: list[Tensor]) -> None:
    for tape in _active:
        tape._add(op, given, read, attrs, outputs)


class GradientTape:
    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self._persistent = persistent
        self._auto_watch = watch_accessed_variables
        self._records: list[tuple[str, list[int], dict | None, list[int]]] = []
        self._tensors: dict[int, Tensor] = {}   # id -> tensor (kept alive: ids stay unique)
        self._produced: set[int] = set()
        self._watched: set[int] = set()
        self._used = False
        self._recording = False

    # ---- context ----
    def __enter__(self) -> "GradientTape":
        self._recording = True
        _active.append(self)
        _tensor._recorder = _record
        return self

    def __exit__(self, *exc: Any) -> None:
        self._recording = False
        _active.remove(self)
        if not _active:
            _tensor._recorder = None

    def stop_recording(self):
        tape = self

        class _Pause:
            def __enter__(self_inner):
                _active.remove(tape)
                if not _active:
                    _tensor._recorder = None

            def __exit__(self_inner, *exc):
                _active.append(tape)
                _tensor._recorder = _record
        return _Pause()

    def reset(self) -> None:
        self._records.clear()
        self._tensors.clear()
        self._produced.clear()
        self._watched.clear()

    # ---- what it records ----
    def _id(self, t: Tensor) -> int:
        i = id(t)
        self._tensors[i] = t
        return i

    def _add(self, op: str, given: Sequence[Any], read: list[Tensor], attrs: dict | None,
             outputs: list[Tensor]) -> None:
        ins = []
        for g, x in zip(given, read):
            if isinstance(g, Variable) and g.trainable and self._auto_watch:
                self._watched.add(id(x))
            ins.append(self._id(x))
        outs = [self._id(t) for t in outputs]
        self._produced.update(outs)
        # A composite (a Keras layer call or loss) is kept as the object; attributes as a dict.
        kept = attrs if op == "@composite" else (dict(attrs) if attrs else None)
        self._records.append((op, ins, kept, outs))

    def watch(self, tensor: Any) -> None:
        for t in (tensor if isinstance(tensor, (list, tuple)) else [tensor]):
            if isinstance(t, Variable):
                t = t._value
            if not isinstance(t, Tensor):
                raise TypeError(f"watch expects tensors or Variables, got {type(t).__name__}")
            self._watched.add(self._id(t))

    def watched_variables(self) -> list:
        return [t for i, t in self._tensors.items() if i in self._watched]

    # ---- gradient ----
    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: str = "none") -> Any:
        """d target / d sources, shaped as `sources` (a tensor, a list, or nested lists).
        Unconnected sources give None (or zeros with unconnected_gradients='zero')."""
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")
        self._used = True
        from ._api import zeros_like
        flat_sources = _flatten(sources)
        flat_targets = _flatten(target)
        weights = _flatten(output_gradients) if output_gradients is not None else [None] * len(flat_targets)
        src_tensors = [s._value if isinstance(s, Variable) else s for s in flat_sources]
        tgt_tensors = [t._value if isinstance(t, Variable) else t for t in flat_targets]
        for s in src_tensors:
            if not isinstance(s, Tensor):
                raise TypeError(f"gradient sources must be tensors or Variables, got {type(s).__name__}")
        # Which records lead from watched values to the targets.
        connected = self._connected(set(id(t) for t in tgt_tensors))
        results: list[Any] = [None] * len(src_tensors)
        live = [k for k, s in enumerate(src_tensors)
                if id(s) in connected and (id(s) in self._watched or id(s) in self._produced)]
        if live and all(id(t) in self._produced or id(t) in self._watched for t in tgt_tensors):
            records = [r for r in self._records if any(o in connected for o in r[3])]
            produced = {o for r in records for o in r[3]}
            leaves = []
            for r in records:
                for i in r[1]:
                    if i not in produced and i not in leaves:
                        leaves.append(i)
            weight_ids = []
            for w in weights:
                if w is None:
                    weight_ids.append(None)
                else:
                    w = w if isinstance(w, Tensor) else _as_tensor(w)
                    weight_ids.append(self._id(w))
                    if id(w) not in leaves:
                        leaves.append(id(w))
            # Sources must be values of the graph: a watched leaf or a produced value.
            for k in live:
                i = id(src_tensors[k])
                if i not in produced and i not in leaves:
                    leaves.append(i)
            key = _key(records, leaves, [self._tensors[i] for i in leaves],
                       [id(t) for t in tgt_tensors], weight_ids, [id(src_tensors[k]) for k in live])
            grads = _dlrt.tape_gradient(key, records, leaves, [self._tensors[i]._h for i in leaves],
                                        [id(t) for t in tgt_tensors], weight_ids,
                                        [id(src_tensors[k]) for k in live])
            for k, g in zip(live, grads):
                results[k] = Tensor(g)
        if unconnected_gradients == "zero":
            results = [r if r is not None else zeros_like(s) for r, s in zip(results, src_tensors)]
        if not self._persistent:
            self.reset()
        return _unflatten(sources, results)

    def _connected(self, targets: set[int]) -> set[int]:
        """Every value the targets depend on through recorded ops (the targets included)."""
        needed = set(targets)
        for op, ins, _, outs in reversed(self._records):
            if any(o in needed for o in outs):
                needed.update(ins)
        return needed


def _as_tensor(x: Any) -> Tensor:
    from ._api import constant
    return constant(x)


def _flatten(x: Any) -> list:
    if isinstance(x, (list, tuple)):
        out = []
        for e in x:
            out.extend(_flatten(e))
        return out
    return [x]


def _unflatten(structure: Any, flat: list) -> Any:
    it = iter(flat)

    def build(s: Any) -> Any:
        if isinstance(s, (list, tuple)):
            return type(s)(build(e) for e in s) if isinstance(s, tuple) else [build(e) for e in s]
        return next(it)
    return build(structure)


def _key(records: list, leaves: list[int], leaf_tensors: list[Tensor], targets: list[int],
         weights: list, sources: list[int]) -> str:
    """The shape of a record, with values numbered by first appearance: two tapes of the same
    ops on the same dtypes and dims share a key (and the compiled graph)."""
    numbers: dict[int, int] = {}

    def n(i: Any) -> Any:
        if i is None:
            return None
        if i not in numbers:
            numbers[i] = len(numbers)
        return numbers[i]
    parts = [repr([(n(i), t.dtype.enum, tuple(t.shape)) for i, t in zip(leaves, leaf_tensors)])]
    for op, ins, attrs, outs in records:
        what = attrs.key if op == "@composite" else (sorted(attrs.items()) if attrs else "")
        parts.append(f"{op}{[n(i) for i in ins]}{what}{[n(o) for o in outs]}")
    parts.append(repr(([n(t) for t in targets], [n(w) for w in weights], [n(s) for s in sources])))
    return ";".join(parts)
