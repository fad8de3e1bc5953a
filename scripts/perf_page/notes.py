"""The "Notes from this run" section: what the whole run's rows say about the machine and the pools
(threads spinning after a call, a busy machine, ratios too good to claim, stalled joins, failures)."""

import statistics

from perf_page.common import BUSY_LOAD, fmt_time, time_ns


def observations(rows):
    notes = []
    spins = [r["spin_after_ms"] for r in rows if r.get("spin_after_ms") is not None and r.get("threads", 1) != 1]
    if spins:
        med = statistics.median(spins)
        notes.append(
            f"- After a multi-threaded call, sqdiff's pool threads kept running for a median of "
            f"{med:.2f} ms (max {max(spins):.2f} ms) before going to sleep (`spin_after_ms`). On a 2-core "
            "machine that is a core taken from whatever runs next; the benchmark waits it out so it does not "
            "distort the other contenders.")
    eigen_spins = [r["eigen_spin_after_ms"] for r in rows if r.get("eigen_spin_after_ms") is not None]
    if eigen_spins:
        notes.append(f"- Eigen's pool, for comparison: median {statistics.median(eigen_spins):.2f} ms.")
    busy = [r for r in rows if r.get("load1") is not None and r["load1"] > BUSY_LOAD]
    if busy:
        notes.append(
            f"- {len(busy)} of {len(rows)} benchmarks ran while the 1-minute load average was above {BUSY_LOAD} "
            "(bold in the load column): other jobs shared the 2 cores. Ratios of 1-thread cases mostly survive "
            "that (both sides of a ratio are slowed alike); 2-thread cases suffer most, because a thread that "
            "is descheduled stalls its partner at the join.")
    above = [r for r in rows if r.get("r_bound") is not None and r["r_bound"] > 1.05]
    if above:
        notes.append(
            "- Ratios above 1 (sqdiff faster than the bound loops in the same round): "
            + ", ".join(f"`{r['name']}` {r['r_bound']:.2f}" for r in above)
            + ". Either noise (a bound sample stalled in most rounds: see the load column), or a case where a "
            "simple loop is not the fastest way to move those bytes; either way not a figure to claim.")
    # 2-thread rows far slower than the same case on 1 thread, at about a
    # multiple of the 4 ms scheduler tick: the join waited for a descheduled thread.
    by_name = {r["name"]: r for r in rows if "error" not in r}
    stalled = []
    for r in rows:
        if "error" in r or not r["name"].endswith("/t2"):
            continue
        one = by_name.get(r["name"][:-2] + "t1")
        if one is not None and time_ns(r) > 3.5e6 and time_ns(r) > 5 * time_ns(one):
            stalled.append(f"`{r['name']}` {fmt_time(time_ns(r))} (1 thread: {fmt_time(time_ns(one))})")
    if stalled:
        notes.append(
            "- 2-thread calls that stalled: " + ", ".join(stalled) + ". Times near 4 or 8 ms are scheduler "
            "ticks: when the other core is busy with another process, a pool thread woken from sleep is often "
            "put on the caller's core; sqdiff's pool then waits only for a tile that worker already claimed, "
            "but a worker preempted mid-tile still costs a tick. The bound loops' worker is pinned "
            "to the other core and does not suffer this; Eigen's pool blocks instead of spinning. "
            "`cold_call_ns` in the JSON is the first call after the pool slept.")
    errors = [r for r in rows if "error" in r]
    if errors:
        notes.append(f"- {len(errors)} benchmarks failed: " + ", ".join(r["name"] for r in errors))
    return "\n".join(notes) if notes else "- none"
