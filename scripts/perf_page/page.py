"""The whole of docs/PERFORMANCE.md from one run: its sections in order, the method, and the sections
other scripts wrote from runs of their own carried over from the page it replaces."""

from perf_page.common import SUSPECT_RATIO
from perf_page.elementwise import shape_tables, targets_section
from perf_page.machine import machine_section
from perf_page.notes import observations
from perf_page.pairwise import pairwise_section
from perf_page.peers import peers_faster_section
from perf_page.reductions import reductions_section
from perf_page.splice import kept_peer_speed_section, kept_quantized_section


METHOD = """\
## Method

**What is compared.** Every benchmark runs, in one body, its contenders on the same buffers:
sqdiff through its public API (`sqdiff::squared_difference` unless the name says `subtract`), the
same call again as `self` (the noise band), two *bound loops* that move the same bytes (one with
ordinary stores, one with streaming stores), and the peers computing the same thing (Eigen; for
f32, XNNPACK and oneDNN too). They take turns, round after round. A *sample* is a batch of
back-to-back calls lasting about 200 µs (one call when a call is longer). In each round every
contender is sampled three times, interleaved, each pass in a new shuffled order (what ran just
before leaves its mark on the caches: with a fixed order, sqdiff timed twice differed by 5% at
256K), and keeps its best sample: other processes on the two cores only ever add time, so the best
of three filters a preempted sample out. Every ratio is then computed per round, from samples taken
milliseconds apart, and the table shows the median over the rounds (at least 5, more while the budget of
0.6 s per benchmark lasts, at most 201). The shared machine drifts by up to 2x over minutes but
hardly within a round, so the ratios hold where the absolute times do not; the times and GB/s are
medians too, but only comparable within one run.

**Bytes moved** (the GB/s column) counts what the op must move, not what the hardware does: the
output once, plus each input element once. Same shape: 3 x n x element size, in place too (the
line written back is the line just read). Broadcasts: output + every element of each input once;
a small input that stays in cache is counted once however often it is re-read; a strided view
counts every line it spans (stride 2 reads twice the bytes of its elements).

**The bound** of a case is the fastest of its two bound loops in the same round, scaled to the
case's bytes: `bound time = loop time x case bytes / loop bytes`. The loop family follows what the
case reads:
- *add* `c = a + b` (two large inputs; same shape, reversed and strided views). In place, the plain
  loop is in place too (`a = max(a, b)`, which leaves the data unchanged), since that is the
  cheapest way to move those bytes.
- *copy* `c = a` (one large input and a small one: per-channel, row, column, scalar).
- *fill* `c = constant` (both inputs small, only the output is large: both-sided, tiny inner dims).

Each family runs with ordinary stores (write-allocate: each store first reads its line) and with
streaming stores (`_mm512_stream_si512` on an aligned body, then `sfence`); the streaming loop
writes to a spare buffer, so that the lines it evicts are not the case's output. Above the caches
the streaming loop wins; inside them the plain loop does, so "ratio to the bound" is the ratio to
the streaming-store loop for large arrays and to the plain loop over the same data for small ones
(the issue's "4K in L1" bound; 4K f32 elements in three arrays are 48 KiB, more than the 32 KiB
L1d, so that case runs from L1 and L2; 4K f16/bf16 fit in L1). The loops are byte loops (32-bit
integer lanes): an f16 case of n elements is bounded by the add loop over the same 2n bytes per
buffer. In L1 the limit is the load and store ports, not the arithmetic, so the lane type does not
matter; integer lanes also rule out denormal or NaN slow-downs whatever bits the buffers hold.

**f16 and bf16 in the caches.** For these the conversions are the limit, not the ports, so their
4K rows stay far below the byte add loop. The 1-thread f16 and bf16 cases of 4K and 256K elements
therefore also time a *conversion floor* (`bench/conversion_floor.hpp`): the least loop that does
the case's work with this CPU's instructions, per 16 lanes two widening conversions (`vcvtph2ps`;
for bf16 an in-block unpack, which widens in an order of its own), a subtract, a multiply and one
narrowing conversion (`vcvtps2ph`; for bf16 AVX512-BF16's `vcvtne2ps2bf16`, two vectors at once,
and a permute back into order), without the check for f32 subnormals that sqdiff needs (the bf16
instructions flush them; SPEC does not). It is reported as `r_f16_floor` / `r_bf16_floor` (floor
time over sqdiff's time: 1.00 = as fast as the floor) and shown beside the 4K rows in the targets
table. At 4K the floor itself runs at about a fifth (f16) and two fifths (bf16) of the byte add
loop.

**Threads.** With 2 threads the bound loops split the range in two halves over the caller and one
worker thread that is started once and kept alive; before the clock starts the worker is woken
(spinning) and pinned to a CPU other than the caller's, and after the clock stops it is parked
(asleep), so thread start-up and wake-up are never timed and the two halves really run side by
side. With more than one thread, every contender (sqdiff, Eigen and the bound loops alike) starts
each sample with 10 ms of untimed calls: the pool is awake, the scheduler has had a tick or two to
spread its threads, and each thread's share of the data sits in its own core's cache, as it would
in a loop of calls. Each sample ends by waiting until no other thread of the process is running
or runnable, so that a pool that keeps spinning after a call cannot steal a core from the next
contender. How long those threads kept running after the call returned (wall time, polled every
20 us through /proc) is reported as `spin_after_ms`, and
the first, cold call of each sample as `cold_call_ns`. sqdiff is called with `Options::threads` =
1 or 2 (0, the library default, for the `t0` row). On a loaded 2-core machine the 2-thread figures
are still the least reliable ones: see the load column and the notes above. The f16 and bf16
16M in-place rows straddle the cache: their 2-thread bound loop moves 75-90 GB/s in most runs,
more than DRAM gives, and in some runs 120-150 GB/s (`bound_GBps` in the raw results), when
this machine keeps most of the 64 MiB of a and b cached. There sqdiff is limited by the
conversions, as at 4K, and its ratio drops to about 0.6-0.7 (bf16 in place, 2 threads: the bound
0.68 ms at 147 GB/s, sqdiff 1.06 ms, in one such run).

**Eigen** 3.4 (Debian's header-only package) is the peer: same shape, 1 thread, `(a - b).square()`
on `Eigen::Map`'d arrays; 2 threads and every broadcast, the Tensor module (`TensorMap`,
`.broadcast()`, `.reverse()`, `.stride()`) on a `ThreadPoolDevice` with 2 threads or the default
device. f16 and bf16 use `Eigen::half` and `Eigen::bfloat16` (which round `a - b` to the half type
before squaring: less careful than sqdiff, not slower for it). "vs Eigen" is Eigen's time over
sqdiff's (above 1: sqdiff is faster); "Eigen / bound" is Eigen's own fraction of the bound.
Eigen's f16 is skipped at 64M elements: `Eigen::half` arithmetic runs some 40x slower than sqdiff
here (see the 4M and 16M rows), and one call at 64M takes over a second.

**XNNPACK and oneDNN** (Debian's packages) are peers of every f32 same-shape and dense broadcast
case (`bench/xnnpack_peer.hpp`, `bench/onednn_peer.hpp`). XNNPACK: its `squared_difference_nd_f32`
(or `subtract_nd_f32`) operator, created and set up once per case (shapes, buffers, pool), so a
timed call is `xnn_run_operator`; 2 threads on a `pthreadpool` of 2, 1 thread inline. oneDNN: one
`binary_sub` primitive with an `eltwise_square` post-op (the square is applied in registers before
the store), created once per case on the CPU engine, 1 or 2 OpenMP threads (`omp_set_num_threads`).
oneDNN broadcasts its second source only: for a broadcast `a` against a full `b` the operands are
swapped (`(b - a)^2` is exactly `(a - b)^2`), and the both-sided cases have no oneDNN figure.
Their 2-thread figures depend on the load more than sqdiff's: a call of pthreadpool (XNNPACK) or
of libgomp (oneDNN) returns only when every worker has checked in, so a worker that the scheduler
has not run yet holds the caller up; sqdiff's caller waits for the tiles claimed, and claims the
rest itself. At a load average of 13-23 on the 2 cores, many of their 2-thread calls took 15-40 ms
whatever the size (in the bench and in a plain loop around `run()` alike).

**Build.** The library is built as the project builds it (Release, Highway picks the SIMD target at
run time). The benchmark program, which holds the bound loops and the Eigen code, is compiled with
`-O3 -march=native`: the bound loops use the widest vectors and streaming stores the CPU has, and
Eigen, which picks its SIMD at compile time, gets AVX-512 too. A bound or a peer held back by
portable flags would flatter sqdiff. Buffers are 2 MiB-aligned, touched before any timing, and
advised to use transparent huge pages (as NumPy does for large arrays). Google Benchmark only
hosts the run here (one iteration per benchmark, with the time set by the harness), so its
"Library was built as DEBUG" warning about Debian's package does not affect the figures.
"""


def full_page(ctx, rows, python_paths, pairwise_python, path):
    """The page for `rows` in sort_key's order; `path` is the page it replaces, whose sections written by
    other scripts it keeps."""
    command = ctx.get("command", "scripts/bench.sh")

    out = []
    out.append("# Performance\n")
    out.append("<!-- Generated by scripts/perf_table.py from sqdiff_bench's JSON output; do not edit by hand. "
               "Regenerate with scripts/bench.sh. -->\n")
    out.append("sqdiff against the memory-bandwidth bound of this machine and against Eigen, measured side by side "
               "in one run. The figures that matter are the **ratios**: they are taken within one round of "
               "interleaved samples, while absolute times on this shared machine drift by up to 2x over minutes. "
               "The numbers change as the library gets faster; the command below regenerates this page.\n")
    out.append(f"Command: `{command}` (full run; `scripts/bench.sh --quick` for a shorter one; "
               "`scripts/bench.sh --filter REGEX` runs a subset into `build-bench/bench-filtered.md`).\n")
    if ctx.get("mode") == "quick":
        out.append("**This is a quick run** (short budget per benchmark, fewer rounds): expect more scatter than "
                   "a full run.\n")
    out.append("## Machine and build\n")
    out.append(machine_section(ctx) + "\n")
    out.append("## Targets (issue 3)\n")
    out.append("Checked against every thread count measured; a target is met when every row it covers meets it. "
               f"A ratio above {SUSPECT_RATIO} (sqdiff faster than the bound loops) is marked `yes?`: that is noise "
               "or a bound loop that is not the fastest way to move those bytes, not a figure to claim.\n")
    out.append(targets_section(rows) + "\n")
    out.append("## Notes from this run\n")
    out.append(observations(rows) + "\n")
    faster = peers_faster_section([r for r in rows if "error" not in r])
    if faster:
        out.append("## Cases where a peer was faster\n")
        out.append(faster + "\n")
    out.append(shape_tables(rows))
    section = reductions_section(ctx, rows, python_paths, separate_run=False)
    if section:
        out.append(section)
    section = pairwise_section(ctx, rows, pairwise_python, separate_run=False)
    if section:
        out.append(section)
    quantized = kept_quantized_section(path)
    if quantized:
        out.append(quantized)
    out.append(METHOD)
    out.append("## Reading the raw output\n")
    out.append("`build-bench/bench-results.json` (written by `scripts/bench.sh`) holds every counter: `r_bound`, "
               "`r_<loop>` for each bound loop on its own, `r_f16_floor` / `r_bf16_floor`, `bound_GBps`, `vs_eigen`, "
               "`eigen_r_bound`, `eigen_ns`, `r_self` (sqdiff timed twice: the noise band), `spin_after_ms`, `cold_call_ns`, `rounds`, `batch`, `load1`. "
               "`build-bench/bench/sqdiff_bench --help` lists Google Benchmark's options; the bench adds "
               "`--sqdiff_budget=SECONDS`, `--sqdiff_min_rounds=N` and `--sqdiff_samples=N` (samples per round).\n")

    return "\n".join(out) + kept_peer_speed_section(path)
