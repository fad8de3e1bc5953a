"""The element-wise cases (same/, bcast/, small/; issue 3): their targets, and their tables against the
bound loops and the peers."""

import re

from perf_page.common import (PEER_NAMES, fmt_ratio, fmt_size, fmt_time, load_cell, met_text, suspect,
                              target_verdict, threads_text, time_ns)


# The targets (issue 3, "Targets"), by benchmark name. Each entry:
# (title, regex over the benchmark name, kind, value). kind "ratio": r_bound >=
# value; kind "ns": median time per call < value.
TARGETS = [
    ("64M-element f32, same shape, out-of-place: >= 0.95 of the bound",
     r"^same/sqdiff/f32/64M/out/", "ratio", 0.95),
    ("64M-element f32, same shape, in-place: >= 0.95 of the bound",
     r"^same/sqdiff/f32/64M/inplace/", "ratio", 0.95),
    ("Per-channel, row, column, scalar, both-sided broadcasts, 8M+ outputs: >= 0.90",
     r"^bcast/(per_channel|per_channel_sv|row|column|scalar|both_sided)/", "ratio", 0.90),
    ("f16 and bf16 at 16M elements: >= 0.90",
     r"^same/sqdiff/(f16|bf16)/16M/", "ratio", 0.90),
    ("4K elements in L1 (1 thread): >= 0.90 of the plain add loop",
     r"^same/sqdiff/[a-z0-9]+/4K/.*/t1$", "ratio", 0.90),
    ("The specs' [8,1,6,1] with [7,1,5]: < 100 ns per call",
     r"^small/spec_example/", "ns", 100.0),
]

LOOP_NAMES = {
    "add": "add",
    "add_nt": "add, streaming",
    "add_inplace": "add in place",
    "copy": "copy",
    "copy_nt": "copy, streaming",
    "fill": "fill",
    "fill_nt": "fill, streaming",
}


def target_of(name):
    for title, pattern, kind, value in TARGETS:
        if re.search(pattern, name):
            return title, kind, value
    return None


def met(row, target):
    if target is None:
        return None
    _, kind, value = target
    if kind == "ratio":
        r = row.get("r_bound")
        return None if r is None else r >= value
    return time_ns(row) < value


def target_text(target):
    if target is None:
        return "—"
    _, kind, value = target
    return f"≥ {value:.2f}" if kind == "ratio" else f"< {value:.0f} ns"


def describe_case(name):
    """(group, case, detail) from a benchmark name."""
    parts = name.split("/")
    if parts[0] == "same":
        op, dtype, size, place, threads = parts[1:6]
        op_name = "squared_difference" if op == "sqdiff" else op
        return "same", f"{op_name} {dtype} {'in place' if place == 'inplace' else 'out of place'}", threads
    if parts[0] == "bcast":
        kind, shapes, threads = parts[1:4]
        a, b = shapes.split("-", 1)
        show = lambda s: "[]" if s == "scalar" else "[" + s.replace("x", ",") + "]"  # noqa: E731
        return "bcast", f"{kind} `{show(a)}` with `{show(b)}`", threads
    if parts[0] == "small":
        kind, shapes, threads = parts[1:4]
        a, b = shapes.split("-", 1)
        return "small", f"{kind} `[{a.replace('x', ',')}]` with `[{b.replace('x', ',')}]`", threads
    return "other", name, ""


def short_case(row):
    """A compact name for the targets table: "f32 out t1", "per_channel t2"."""
    parts = row["name"].split("/")
    threads = threads_text(row, parts[-1])
    threads = "default threads" if threads == "default" else f"t{threads}"
    if parts[0] == "same":
        return f"{parts[2]} {'in place' if parts[4] == 'inplace' else 'out'} {threads}"
    return f"{parts[1]} {threads}"


def table(rows, with_bound=True):
    head = ["case", "size", "threads", "time", "GB/s"]
    if with_bound:
        head += ["ratio to bound (loop)", "Eigen / bound"]
    head += ["vs Eigen", "vs XNNPACK", "vs oneDNN", "target", "met", "load"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for row in rows:
        _, case, threads = describe_case(row["name"])
        if "error" in row:
            lines.append(f"| {case} | | | error: {row['error']} |" + " |" * (len(head) - 4))
            continue
        target = target_of(row["name"])
        cells = [case, fmt_size(row.get("elements", 0)), threads_text(row, threads), fmt_time(time_ns(row)),
                 fmt_ratio(row.get("GBps"), 1)]
        if with_bound:
            loop = LOOP_NAMES.get(row["labels"].get("bound", ""), row["labels"].get("bound", "?"))
            r = row.get("r_bound")
            cells += [f"{fmt_ratio(r)} ({loop})" if r is not None else "—", fmt_ratio(row.get("eigen_r_bound"))]
        for peer in PEER_NAMES:
            vs = row.get("vs_" + peer)
            cells.append(f"{vs:.2f}x" if vs is not None else "—")
        cells += [target_text(target), met_text(met(row, target), row)]
        cells.append(load_cell(row))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sort_key(row):
    dtype_order = {"f32": 0, "f16": 1, "bf16": 2, "i32": 3}
    parts = row["name"].split("/")
    if parts[0] == "same":
        return (0 if parts[1] == "sqdiff" else 1, dtype_order.get(parts[2], 9), row.get("elements", 0),
                0 if parts[4] == "out" else 1, parts[5])
    return (0, 0, 0, "", row["name"])


def targets_section(rows):
    lines = ["| target | rows | figures (ratio to bound, or time per call) | met |", "|---|---|---|---|"]
    for title, pattern, kind, value in TARGETS:
        matching = [r for r in rows if "error" not in r and re.search(pattern, r["name"])]
        if not matching:
            lines.append(f"| {title} | not run | | — |")
            continue
        figures = []
        met_count = 0
        suspect_count = 0
        for r in sorted(matching, key=lambda r: r["name"]):
            figure = fmt_time(time_ns(r)) if kind == "ns" else fmt_ratio(r.get("r_bound"))
            floors = [f"{fmt_ratio(v)} of the {k[2:].replace('_', ' ')}" for k, v in sorted(r.items())
                      if k.startswith("r_") and k.endswith("_floor")]
            if floors:
                figure += f" ({', '.join(floors)})"
            figures.append(f"{short_case(r)}: {figure}")
            if met(r, (title, kind, value)):
                met_count += 1
                suspect_count += 1 if suspect(r) else 0
        verdict = target_verdict(met_count, len(matching), suspect_count)
        lines.append(f"| {title} | {len(matching)} | {'; '.join(figures)} | {verdict} |")
    return "\n".join(lines)


def shape_tables(rows):
    """The same-shape, broadcast and small-call tables, each under its heading, then what their columns mean."""
    same = [r for r in rows if r["name"].startswith("same/")]
    bcast = [r for r in rows if r["name"].startswith("bcast/")]
    small = [r for r in rows if r["name"].startswith("small/")]
    out = []
    if same:
        out.append("## Same shape\n")
        out.append("`a`, `b` and `out` of n elements; in place means `out` is `a`. Sizes: 4K is in L1/L2, 256K in "
                   "L2/L3 (3 MiB of f32), 4M straddles the 32 MiB L3 (48 MiB of f32: partly cached, so the most "
                   "sensitive to what ran just before), 16M and 64M are DRAM.\n")
        out.append(table(same) + "\n")
    if bcast:
        out.append("## Broadcasts (f32)\n")
        out.append(table(bcast) + "\n")
    if small:
        out.append("## Small calls (f32)\n")
        out.append("Call overhead: the output has 1,680 elements. The views are built once, as a caller owning its "
                   "tensors would; the time is the call. The bound is the floor under any implementation: a loop "
                   "that only stores the output's 6,720 bytes (*fill*), reading nothing.\n")
        out.append("Every call here repeats the shapes of the one before, as a model's inner loop does, so it "
                   "reuses the plan its thread remembers for that key (`src/call_memo.hpp`, the last 4 keys "
                   "a thread used) and skips validation and planning; a call "
                   "this small also replays the kernel calls recorded with the plan (`RecordedRun`, "
                   "`src/execute.hpp`) instead of walking the plan again. A call "
                   "whose shapes or strides are not among its thread's recent keys validates and plans as well; "
                   "the run times that too (the same call with a's strides spelt out, cycling through 16 keys "
                   "that differ in the stride of a dim of size 1, `r_new_shapes`):\n")
        for r in sorted(small, key=lambda r: r["name"]):
            if r.get("r_new_shapes"):
                out.append(f"- {short_case(r)}: repeated {fmt_time(time_ns(r))}, new shapes "
                           f"{fmt_time(time_ns(r) * r['r_new_shapes'])} per call.")
        out.append("")
        out.append(table(small) + "\n")
    out.append("Columns: *time* is sqdiff's median time per call; *GB/s* is bytes moved (defined below) over that "
               "time; *ratio to bound* is bound time over sqdiff's time, median of per-round ratios (1.00 = at the "
               "bound), with the loop that set the bound; *Eigen / bound* is the same for Eigen; *vs Eigen* is "
               "Eigen's time over sqdiff's (above 1: sqdiff is faster), *vs XNNPACK* and *vs oneDNN* the same for "
               "those peers (f32 only; — where the peer cannot run the case); *load* is the 1-minute load average when the benchmark finished.\n")
    return "\n".join(out)
