"""What ran where, from the JSON context sqdiff_bench records: the page's machine
list, and the note that names the run a section written into the page came from."""

import re

from perf_page.common import fmt_size


def fmt_mem(text):
    match = re.match(r"(\d+)\s*kB", text)
    return f"{int(match.group(1)) / (1 << 20):.1f} GiB" if match else (text or "unknown")


def machine_section(ctx):
    caches = ", ".join(
        f"L{c['level']} {c['type'].lower()} {fmt_size(c['size'])}B"
        + (f" (shared by {c['num_sharing']})" if c.get("num_sharing", 0) > 1 else "")
        for c in ctx.get("caches", []))
    load_avg = ctx.get("load_avg")
    load_text = ", ".join(f"{x:.2f}" for x in load_avg) if load_avg else "unknown"
    items = [
        ("CPU", f"{ctx.get('cpu_model', 'unknown')}, {ctx.get('num_cpus', '?')} cores, "
                f"{ctx.get('mhz_per_cpu', '?')} MHz (as reported)"),
        ("CPU features used", ctx.get("cpu_features", "unknown")),
        ("Caches", caches or "unknown"),
        ("Memory", fmt_mem(ctx.get("mem_total", ""))),
        ("OS", f"{ctx.get('os', 'unknown')}, {ctx.get('kernel', '')}, transparent huge pages: {ctx.get('thp', '?')}"),
        ("Load at start (1, 5, 15 min)", load_text),
        ("Compiler", ctx.get("compiler", "unknown")),
        ("sqdiff", f"{ctx.get('sqdiff_version', '?')}, {ctx.get('sqdiff_build_type', '?')} build, "
                   f"SIMD target {ctx.get('sqdiff_simd_target', '?')}, commit {ctx.get('git', 'unknown')}"),
        ("Benchmark program flags", f"`{ctx.get('bench_cxx_flags', 'unknown')}`"),
        ("Peers and tools", f"Eigen {ctx.get('eigen_version', '?')}, XNNPACK {ctx.get('xnnpack_version', '?')}, "
                            f"oneDNN {ctx.get('onednn_version', '?')}, Google Benchmark "
                            f"{ctx.get('google_benchmark_version', '?')}"),
        ("Date", ctx.get("date", "unknown")),
        ("Settings", f"{ctx.get('mode', 'custom')} run: budget {float(ctx.get('sqdiff_budget_seconds', 0)):.2f} s "
                     f"per benchmark, at least {ctx.get('sqdiff_min_rounds', '?')} rounds"
                     + (f", filter `{ctx['filter']}`" if ctx.get("filter") else "")),
    ]
    return "\n".join(f"- **{k}:** {v}" for k, v in items)


def own_run_note(ctx, option, above):
    """A section written into a page generated from other runs names its own run."""
    load_avg = ctx.get("load_avg")
    return (f"This section comes from a run of its own (`{ctx.get('command', 'sqdiff_bench')}`, "
            f"{ctx.get('date', '?')}, {ctx.get('cpu_model', '?')}, {ctx.get('num_cpus', '?')} cores, load at "
            f"start {load_avg[0] if load_avg else float('nan'):.1f}, commit {ctx.get('git', '?')}), written into "
            f"the page by `scripts/perf_table.py {option}`; the sections above come from {above}.\n")
