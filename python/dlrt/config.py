"""dlrt.config: tf.config's device listing and configuration, with TensorFlow's semantics.

    gpus = dlrt.config.list_physical_devices('GPU')
    dlrt.config.set_visible_devices(gpus[:1], 'GPU')
    dlrt.config.experimental.set_memory_growth(gpus[0], True)
    dlrt.config.set_logical_device_configuration(
        dlrt.config.list_physical_devices('CPU')[0],
        [dlrt.config.LogicalDeviceConfiguration(), dlrt.config.LogicalDeviceConfiguration()])
    print(dlrt.config.list_logical_devices())

Physical devices are every device of every loaded plugin; listing them does not start the
runtime. The runtime starts at the first op, model, or logical-device listing; after that
the configuration is fixed and changing it raises RuntimeError, as TensorFlow does.
"""

from __future__ import annotations

import types
from typing import Iterable, NamedTuple

from . import _dlrt


class PhysicalDevice(NamedTuple):
    """TensorFlow's PhysicalDevice: name '/physical_device:GPU:0', device_type 'GPU'."""

    name: str
    device_type: str


class LogicalDevice(NamedTuple):
    """TensorFlow's LogicalDevice: name '/device:CPU:0', device_type 'CPU'."""

    name: str
    device_type: str


class LogicalDeviceConfiguration:
    """One logical device to make from a physical one; memory_limit in MB (TensorFlow's)."""

    def __init__(self, memory_limit: int | None = None, experimental_priority: int | None = None,
                 experimental_device_ordinal: int | None = None) -> None:
        self.memory_limit = memory_limit
        self.experimental_priority = experimental_priority
        self.experimental_device_ordinal = experimental_device_ordinal

    def __repr__(self) -> str:
        return f"LogicalDeviceConfiguration(memory_limit={self.memory_limit})"


VirtualDeviceConfiguration = LogicalDeviceConfiguration  # TensorFlow's older name


class _State:
    visible: list[str] | None = None            # physical short names ("GPU:1"), None = all
    memory_growth: dict[str, bool] = {}          # physical short name -> on
    logical: dict[str, list[LogicalDeviceConfiguration]] = {}
    soft_placement = True


_state = _State()


def _short(name: str) -> str:
    # '/physical_device:GPU:1' -> 'GPU:1'
    return name.rsplit("/", 1)[-1].replace("physical_device:", "").replace("device:", "")


def _physical() -> list[PhysicalDevice]:
    return [PhysicalDevice("/physical_device:" + d["device_type"] + ":" + str(d["index"]),
                           d["device_type"])
            for d in _dlrt.physical_devices()]


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """Every device dlrt's plugins found (of `device_type` 'CPU', 'GPU', ... when given)."""
    devices = _physical()
    if device_type is None:
        return devices
    return [d for d in devices if d.device_type == device_type.upper()]


def _check_not_started(what: str) -> None:
    if _dlrt.runtime_started():
        raise RuntimeError(f"{what} cannot be modified after being initialized")


def _push() -> None:
    """Hands the configuration to the runtime (it applies it when it starts)."""
    physical = [_short(d.name) for d in _physical()]
    visible = physical if _state.visible is None else [p for p in physical if p in _state.visible]
    # Logical splits name devices as visibility renumbers them ("GPU:1" alone is GPU:0).
    renumbered: dict[str, str] = {}
    counts: dict[str, int] = {}
    for p in visible:
        kind = p.split(":")[0]
        renumbered[p] = f"{kind}:{counts.get(kind, 0)}"
        counts[kind] = counts.get(kind, 0) + 1
    logical = []
    for p, configs in _state.logical.items():
        if p not in renumbered:
            raise ValueError(f"logical device configuration for {p}, which is not visible")
        limits = [int((c.memory_limit or 0) * 1024 * 1024) for c in configs]
        logical.append((renumbered[p], len(configs), limits if any(limits) else []))
    growth = set(_state.memory_growth.values())
    if len(growth) > 1:
        raise ValueError("Memory growth cannot differ between GPU devices")
    _dlrt.configure(None if _state.visible is None else ",".join(visible),
                    growth.pop() if growth else None, logical, _state.soft_placement)


def set_visible_devices(devices: PhysicalDevice | Iterable[PhysicalDevice],
                        device_type: str | None = None) -> None:
    """Makes only `devices` of their type (or of `device_type`) visible to the runtime."""
    _check_not_started("Visible devices")
    if isinstance(devices, PhysicalDevice):
        devices = [devices]
    devices = list(devices)
    physical = _physical()
    known = {d.name for d in physical}
    for d in devices:
        if d.name not in known:
            raise ValueError(f"Unrecognized device: {d!r}")
    types_changed = {device_type.upper()} if device_type else {d.device_type for d in devices}
    if not types_changed:
        types_changed = {"GPU"}
    current = set(_state.visible) if _state.visible is not None else {_short(d.name) for d in physical}
    current = {p for p in current if p.split(":")[0] not in types_changed}
    current |= {_short(d.name) for d in devices}
    if not any(p.startswith("CPU:") for p in current) and any(d.device_type == "CPU" for d in physical):
        raise ValueError("CPU must be visible: the runtime needs a host device")
    _state.visible = [_short(d.name) for d in physical if _short(d.name) in current]
    _push()


def get_visible_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    devices = list_physical_devices(device_type)
    if _state.visible is None:
        return devices
    return [d for d in devices if _short(d.name) in _state.visible]


def list_logical_devices(device_type: str | None = None) -> list[LogicalDevice]:
    """The runtime's devices (starts the runtime)."""
    devices = [LogicalDevice(d["name"], d["device_type"]) for d in _dlrt.logical_devices()]
    if device_type is None:
        return devices
    return [d for d in devices if d.device_type == device_type.upper()]


def set_logical_device_configuration(device: PhysicalDevice,
                                     logical_devices: list[LogicalDeviceConfiguration]) -> None:
    """Splits a physical device into logical ones (before the runtime starts)."""
    _check_not_started("Virtual devices")
    if not logical_devices:
        _state.logical.pop(_short(device.name), None)
    else:
        _state.logical[_short(device.name)] = list(logical_devices)
    _push()


def get_logical_device_configuration(device: PhysicalDevice) -> list[LogicalDeviceConfiguration] | None:
    return _state.logical.get(_short(device.name))


def _set_memory_growth(device: PhysicalDevice, enable: bool) -> None:
    if device.device_type != "GPU":
        raise ValueError(f"Cannot set memory growth on non-GPU devices ({device.name})")
    _check_not_started("Physical devices")
    _state.memory_growth[_short(device.name)] = bool(enable)
    _push()


def _get_memory_growth(device: PhysicalDevice) -> bool:
    return _state.memory_growth.get(_short(device.name), False)


def _get_memory_info(device: str) -> dict[str, int]:
    info = _dlrt.memory_info(_dlrt.find_device(device))
    return {"current": info["current"], "peak": info["peak"]}


def set_soft_device_placement(enabled: bool) -> None:
    """Soft placement (the default): an op whose device is missing or cannot run it runs
    elsewhere. Before the runtime starts."""
    _check_not_started("Soft placement")
    _state.soft_placement = bool(enabled)
    _push()


def get_soft_device_placement() -> bool:
    return _state.soft_placement


experimental = types.SimpleNamespace(
    set_memory_growth=_set_memory_growth,
    get_memory_growth=_get_memory_growth,
    get_memory_info=_get_memory_info,
    list_physical_devices=list_physical_devices,
    list_logical_devices=list_logical_devices,
    set_visible_devices=set_visible_devices,
    get_visible_devices=get_visible_devices,
    set_virtual_device_configuration=set_logical_device_configuration,
    VirtualDeviceConfiguration=LogicalDeviceConfiguration,
)
set_logical_device_configuration.__module__ = __name__
