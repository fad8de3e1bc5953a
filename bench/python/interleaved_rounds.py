"""The timing method the Python benchmarks share (docs/PERFORMANCE.md, Method): contenders take
turns, round after round; in each round each one is sampled three times (a sample is a batch of
calls lasting at least 20 ms) and keeps its best sample; ratios are taken within a round, and the
median over rounds is reported, since the shared machine drifts by up to 2x over minutes."""

import statistics
import time

SAMPLE_SECONDS = 0.02
SAMPLES_PER_ROUND = 3


def sample(call, batch):
    start = time.perf_counter()
    for _ in range(batch):
        call()
    return (time.perf_counter() - start) / batch


def measure(contenders, rounds):
    """contenders: [(name, call)]. Returns {name: [seconds per call, one per round]}."""
    batches = {}
    for name, call in contenders:
        call()  # warm-up: first touch, lazy initialisation, page cache
        one = min(sample(call, 1) for _ in range(2))
        batches[name] = max(1, int(SAMPLE_SECONDS / max(one, 1e-9) + 0.999))
    times = {name: [] for name, _ in contenders}
    for _ in range(rounds):
        best = {name: float("inf") for name, _ in contenders}
        for _ in range(SAMPLES_PER_ROUND):
            for name, call in contenders:
                best[name] = min(best[name], sample(call, batches[name]))
        for name in best:
            times[name].append(best[name])
    return times


def ratio(times, slower, faster):
    """Median over rounds of times[slower] / times[faster] (above 1: `faster` is faster)."""
    return statistics.median(s / f for s, f in zip(times[slower], times[faster]))
