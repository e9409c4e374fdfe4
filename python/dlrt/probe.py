"""`python -m dlrt.probe`: dlprobe's table from Python: the plugins found (loaded or not, with
the reason of each refusal) and the devices they give, read through the package's own
libdlrt, so it shows exactly what `import dlrt` will use.
"""

from __future__ import annotations

import sys

from . import _dlrt


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def table() -> str:
    lines = [f"dlrt {_dlrt.version()} (Python package at {__file__.rsplit('/', 1)[0]})", ""]
    plugins = _dlrt.plugins()
    lines.append(f"Plugins ({len(plugins)})")
    rows = [("NAME", "PLATFORM", "ABI", "STATUS", "DEVICES", "PATH")]
    reasons = {}
    for p in plugins:
        rows.append((p["name"] or "?", p["platform"] or "?", f"{p['abi'][0]}.{p['abi'][1]}",
                     p["state"], str(p["device_count"]), p["path"]))
        if p["error"]:
            reasons[len(rows) - 1] = f"{p['error_code']}: {p['error']}"
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for i, r in enumerate(rows):
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r[:5], widths)) + "  " + r[5])
        if i in reasons:
            lines.append("      reason: " + reasons[i])
    devices = _dlrt.physical_devices()
    lines += ["", f"Devices ({len(devices)})"]
    rows = [("NAME", "CLASS", "PLATFORM", "MODEL", "MEMORY")]
    for d in devices:
        rows.append((d["name"], d["device_class"], d["platform"], d["model"],
                     _gib(d["memory_total"]) if d["memory_total"] else "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(lines)


def main() -> int:
    print(table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
