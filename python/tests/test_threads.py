"""Concurrent calls from Python threads, and the GIL being released while computing."""

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import sqdiff
from support import DTYPE_NAMES, OPS, assert_same_bits, dtype_keyword, oracle, random_values


def test_concurrent_calls_from_a_thread_pool():
    """Many threads share read-only inputs and write their own outputs, in place and
    not, with every dtype: each result is the oracle's."""
    rng = np.random.default_rng(5)
    jobs = []
    for i in range(96):
        dtype_name = DTYPE_NAMES[i % len(DTYPE_NAMES)]
        op = OPS[i % 2]
        a = random_values(rng, dtype_name, (64, 1001))
        b = random_values(rng, dtype_name, (1001,))
        jobs.append((op, dtype_name, a, b, oracle(op, a, b, dtype_name)))
    shared = random_values(rng, "float32", (256, 1024))
    shared_b = random_values(rng, "float32", (1024,))
    shared_want = oracle("squared_difference", shared, shared_b, "float32")

    def work(index):
        op, dtype_name, a, b, want = jobs[index]
        kw = {"dtype": dtype_keyword(dtype_name), "threads": [None, 1, 2][index % 3]}
        got = getattr(sqdiff, op)(a, b, **kw)
        in_place = a.copy()
        getattr(sqdiff, op)(in_place, b, out=in_place, **kw)
        together = sqdiff.squared_difference(shared, shared_b[::-1][::-1])
        return got, in_place, together

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(len(jobs))))
    for (op, dtype_name, a, b, want), (got, in_place, together) in zip(jobs, results):
        assert_same_bits(got, want, dtype_name)
        assert_same_bits(in_place, want, dtype_name)
        assert_same_bits(together, shared_want, "float32")


def test_errors_in_threads():
    def bad(_):
        try:
            sqdiff.subtract(np.zeros(3), np.zeros(4))
        except sqdiff.Error as error:
            return str(error)
        return None

    with ThreadPoolExecutor(max_workers=4) as pool:
        messages = set(pool.map(bad, range(64)))
    assert messages == {"subtract: cannot broadcast [3] with [4] (numpy): dimension 0 is 3 vs 4"}


def test_the_gil_is_released_while_computing():
    """A second Python thread runs while sqdiff computes.

    The switch interval is set to an hour, so the interpreter never takes the GIL
    from a running thread: the counting thread (which hands the GIL back after every
    step with sleep(0)) can only advance while the main thread is waiting, here
    inside sqdiff. Were the GIL held during the call, the count could not move.
    """
    a = np.ones(1 << 22, dtype=np.float32)
    out = np.empty_like(a)
    counter = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counter[0] += 1
            time.sleep(0)

    old_interval = sys.getswitchinterval()
    thread = threading.Thread(target=count)
    advanced = []
    sys.setswitchinterval(3600)
    try:
        thread.start()
        time.sleep(0.01)  # let the counter start
        for _ in range(20):
            before = counter[0]
            sqdiff.squared_difference(a, a[::-1], out=out, threads=1)
            advanced.append(counter[0] - before)
            if advanced[-1] > 0:
                break
    finally:
        stop.set()
        sys.setswitchinterval(old_interval)
        thread.join()
    assert advanced[-1] > 0, f"the counting thread never ran during a call: {advanced}"


_FORK_SCRIPT = r"""
import os, sys
import numpy as np
import sqdiff

a = np.arange(1 << 20, dtype=np.float32)
b = np.float32(3)
want = (a - b) ** 2
assert np.array_equal(sqdiff.squared_difference(a, b, threads=2), want)  # the pool's threads exist now
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        # A pre-fork server's worker: it computes with threads of its own,
        # then leaves through sys.exit, which runs the library's static destructors.
        ok = np.array_equal(sqdiff.squared_difference(a, b, threads=2), want)
        sys.exit(0 if ok else 3)
    children.append(pid)
for pid in children:
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"a child ended with {os.waitstatus_to_exitcode(status)}")
print("children ok")
"""


def test_forked_children_compute_and_exit():
    """os.fork() after the thread pool has started: each child runs multi-threaded
    calls and exits through sys.exit (a child used to hang in the pool's destructor)."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", _FORK_SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "children ok"
