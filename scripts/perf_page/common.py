"""What every section of docs/PERFORMANCE.md reads sqdiff_bench's rows with: the
JSON loaded into rows, times, sizes and ratios as the tables print them, and the
flags a row's figures can carry (a busy machine, a ratio too good to claim)."""

import json
import re


def clean_name(name):
    return re.sub(r"(/iterations:\d+)?(/manual_time)?(/real_time)?$", "", name)


def load(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    rows = []
    by_name = {}
    for b in data.get("benchmarks", []):
        if b.get("error_occurred"):
            rows.append({"name": clean_name(b["name"]), "error": b.get("error_message", "error")})
            continue
        # With --benchmark_repetitions, keep the median aggregate.
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = clean_name(b.get("run_name", b["name"]))
        row = dict(b)
        row["name"] = name
        label = {}
        for item in b.get("label", "").split():
            if "=" in item:
                key, value = item.split("=", 1)
                label[key] = value
        row["labels"] = label
        if b.get("run_type") == "aggregate" or name not in by_name:
            by_name[name] = row
    rows.extend(by_name.values())
    return data.get("context", {}), rows


UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def time_ns(row):
    return row["real_time"] * UNIT_NS.get(row.get("time_unit", "ns"), 1.0)


def fmt_time(ns):
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.2f} s"


def fmt_size(n):
    n = int(n)
    for unit, div in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def fmt_ratio(x, digits=2):
    if x is None:
        return "—"
    return f"{x:.{digits}f}"


def threads_text(row, fallback):
    t = row.get("threads")
    if t is None:
        return fallback.lstrip("t")
    t = int(t)
    return "default" if t == 0 else str(t)


BUSY_LOAD = 2.5  # 1-minute load average above which a row is flagged (2 cores)


def load_cell(row):
    """The load column: the 1-minute load average, bold when other jobs shared the cores."""
    load_avg = row.get("load1")
    busy = load_avg is not None and load_avg > BUSY_LOAD
    return ("**" + f"{load_avg:.1f}" + "**") if busy else (f"{load_avg:.1f}" if load_avg is not None else "—")


SUSPECT_RATIO = 1.05  # sqdiff "faster than the bound": noise, not a figure to claim


def suspect(row):
    r = row.get("r_bound")
    return r is not None and r > SUSPECT_RATIO


def met_text(m, row=None):
    if m is None:
        return "—"
    if m and row is not None and suspect(row):
        return "yes?"
    return "**yes**" if m else "no"


def target_verdict(met_count, total, suspect_count):
    """A target's *met* cell: every row it covers must meet it, and a ratio above the bound is no proof."""
    if met_count < total:
        return f"no ({met_count} of {total})"
    if suspect_count:
        return f"unclear ({suspect_count} ratios above {SUSPECT_RATIO}: noise)"
    return "**yes**"


PEER_NAMES = {"eigen": "Eigen", "xnnpack": "XNNPACK", "onednn": "oneDNN"}
