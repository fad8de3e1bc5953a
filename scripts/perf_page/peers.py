"""The "Cases where a peer was faster" section: every case a peer beat sqdiff in, read against the
noise band, with what the run measured of why in the cases that have an explanation."""

from perf_page.common import PEER_NAMES, fmt_ratio, fmt_size, fmt_time, threads_text, time_ns
from perf_page.elementwise import describe_case
from perf_page.reductions import describe_reduction


def l1_edge_note(row):
    """Why Eigen leads at 4K f32 out of place, from the row's own breakdown
    contenders (bench/call_footprint.hpp): the bare kernel, and the kernel
    after reading the call's shapes and kernel table."""
    call = time_ns(row)
    kernel, after_args, eigen = row.get("r_kernel"), row.get("r_kernel_after_args"), row.get("eigen_ns")
    if kernel is None or after_args is None or eigen is None:
        return None
    return (f"Why Eigen leads at 4K f32 out of place (the same rounds): sqdiff's kernel alone takes "
            f"{fmt_time(call * kernel)}, Eigen's expression {fmt_time(eigen)}; the same kernel after reading "
            f"the three shapes and the kernel table, as the public call must, {fmt_time(call * after_args)}; "
            f"the public call {fmt_time(call)}. Three 16 KiB buffers fill this core's 48 KiB L1 exactly, so "
            "every other line a call touches evicts a line that the next call reads again, and with LRU "
            "replacement that costs a miss per line of its set on every call. An expression compiled into the "
            "caller, as Eigen's is, reads nothing but the data; a library call must read its arguments. "
            "XNNPACK, a library call too, is slower than sqdiff here.\n")


def call_overhead_note(row, rows):
    """Why Eigen leads at 4K f32 in place with 2 threads: at 4K both run on one
    thread, so the 1-thread row's breakdown (bench/call_footprint.hpp) splits
    sqdiff's call into its kernel and the rest."""
    one_thread = next((r for r in rows if r["name"] == row["name"][:-len("/t2")] + "/t1"), None)
    if one_thread is None or one_thread.get("r_kernel") is None or one_thread.get("eigen_ns") is None:
        return None
    call, call_t1 = time_ns(row), time_ns(one_thread)
    kernel = call_t1 * one_thread["r_kernel"]
    return (f"Why Eigen leads at 4K f32 in place with 2 threads: at 4K both run on one thread whatever the thread "
            "count (sqdiff below the output size from which it takes a second thread, Eigen's thread-pool executor "
            f"most likely too). sqdiff's call takes {fmt_time(call_t1)} with 1 thread and {fmt_time(call)} with 2; Eigen's "
            f"expression {fmt_time(one_thread['eigen_ns'])} and {fmt_time(row['eigen_ns'])}. sqdiff's kernel alone "
            f"takes {fmt_time(kernel)} (the 1-thread row's rounds), less than either; the other "
            f"{fmt_time(call - kernel)} of its call is what a library call does before its kernel and an expression "
            "compiled into the caller does not: reading the views and the kernel table, checking dtypes, shapes "
            "and overlap, and setting the IEEE defaults (SPEC section 2).\n")


def peers_faster_section(rows):
    """Every case a peer ran faster than sqdiff, read against the noise band:
    r_self, the subject timed twice in the same rounds (bench/case_support.hpp)."""
    selves = sorted(r["r_self"] for r in rows if r.get("r_self") is not None)
    if not selves:
        return None
    # The band is where 90% of the cases' r_self fall (a few cases, 2-thread
    # ones above all, scatter far wider), made symmetric about 1: which copy
    # of sqdiff is "self" is arbitrary, so r and 1 / r are as far from 1.
    tail = len(selves) // 20
    p5, p95 = selves[tail], selves[-1 - tail]
    low = min(p5, 1 / p95)
    repetitions = max((int(r.get("repetitions") or 1) for r in rows), default=1)
    lines = [f"Noise band: {low:.2f}-{1 / low:.2f}. sqdiff is timed a second time in every case, as one more "
             "contender in the same shuffled rounds; `r_self`, its time over the first's (median of rounds), is "
             f"what two equal contenders differ by. Over the {len(selves)} cases of this page, 90% of `r_self` lie "
             f"in {p5:.2f}-{p95:.2f} (all: {selves[0]:.2f}-{selves[-1]:.2f}); the band is that, made symmetric "
             "about 1. A peer is faster beyond noise when its ratio is below the band and below the case's own "
             "`r_self` (or 1 / `r_self`, whichever is smaller).\n"]
    if repetitions > 1:
        lines.append(f"Each case ran {repetitions} times, its repetitions interleaved at random with the other "
                     "cases' over the whole run (`--benchmark_repetitions`, "
                     "`--benchmark_enable_random_interleaving`); every figure here, `r_self` included, is the "
                     f"median of the {repetitions}. Between single runs, a peer's ratio in the cases that run from "
                     "memory moved by up to 3%, more than `r_self` moves within one run.\n")
    slower = []
    for row in rows:
        for peer, shown in PEER_NAMES.items():
            vs = row.get("vs_" + peer)
            if vs is not None and vs < 1.0:
                slower.append((vs, row, shown))
    if not slower:
        lines.append("No peer was faster than sqdiff in any case of this run.")
        return "\n".join(lines)
    for _, row, shown in slower:
        if shown == "Eigen" and row["name"].startswith("same/sqdiff/f32/4K/out/t1"):
            note = l1_edge_note(row)
            if note:
                lines.append(note)
        if shown == "Eigen" and row["name"].startswith("same/sqdiff/f32/4K/inplace/t2"):
            note = call_overhead_note(row, rows)
            if note:
                lines.append(note)
    widened = [(describe_reduction(row)[1], row["r_eigen_f64"]) for _, row, shown in slower
               if shown == "Eigen" and row.get("r_eigen_f64") is not None]
    if widened:
        figures = " and ".join(f"{ratio:.1f}x sqdiff's time with {threads} thread{'' if threads == '1' else 's'}"
                               for threads, ratio in sorted(widened))
        lines.append("Why Eigen leads the f32 sum over all axes: it sums in f32, with an error that grows with n; "
                     "sqdiff returns the exact sum rounded once, which rests on widening every element to f64 (half "
                     "the lanes per instruction). The same Eigen expression widened to f64 (`r_eigen_f64`) takes "
                     f"{figures}, in the same rounds.\n")
    lines.append("| case | size | threads | peer | peer time / sqdiff time | r_self of the case | verdict |")
    lines.append("|---|---|---|---|---|---|---|")
    for vs, row, shown in sorted(slower, key=lambda item: item[0]):
        if row["name"].startswith(("reduce/", "grad/")):
            case, threads = describe_reduction(row)
        else:
            _, case, threads = describe_case(row["name"])
        own = row.get("r_self")
        own_low = min(own, 1 / own) if own else 1.0
        verdict = "**beyond noise**" if vs < min(low, own_low) else "within noise"
        lines.append(f"| {case} | {fmt_size(row.get('elements', 0))} | {threads_text(row, threads)} | {shown} | "
                     f"{vs:.2f} | {fmt_ratio(own)} | {verdict} |")
    return "\n".join(lines)
