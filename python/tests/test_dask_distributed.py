"""sqdiff.dask on a distributed cluster of worker processes, and on data larger than the workers' memory.

Both tests start a LocalCluster of two worker processes (one thread each) on
127.0.0.1. They are marked `slow` (about a minute together); scripts/test.sh
runs them with the newest distributed (the Python venv stage) and with Debian
12's (the release build's stage). Skipped, with the reason, where Dask,
distributed or zarr is missing or older than sqdiff supports (optional_modules.py).
"""

import shutil

import numpy as np
import pytest

from optional_modules import require  # noqa: E402

da = require("dask.array")
distributed = require("distributed")
zarr = require("zarr")

import sqdiff  # noqa: E402
import sqdiff.dask as sd  # noqa: E402
from support import assert_same_bits, random_values  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    # distributed 2022.12 (Debian 12's python3-distributed) starts its event loops with tornado's
    # make_current(), which Python 3.10+ deprecates; its own code, fixed in later releases.
    pytest.mark.filterwarnings("ignore:make_current is deprecated:DeprecationWarning"),
]

WORKER_MEMORY = "400MiB"
WORKER_MEMORY_BYTES = 400 * 2**20


@pytest.fixture(scope="module")
def client():
    """Two worker processes of one thread and 400 MiB each (beyond that the nanny
    restarts a worker: the tests check that none was). The dashboard, if any, on a free
    port: distributed 2022.12 takes dashboard_address=None for its default, 8787, which
    another cluster on the machine may hold."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=":0", memory_limit=WORKER_MEMORY) as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        yield client


def workers(client):
    """The workers' addresses, asked of the scheduler itself. Client.scheduler_info()
    can return a cached identity with no workers in it: distributed 2026.8 refreshes
    that cache every 2 s without them, and the refresh can land between the call's own
    fetch and its return (a CI run saw [] after a correct compute)."""
    return sorted(client.run_on_scheduler(scheduler_worker_addresses))


def scheduler_worker_addresses(dask_scheduler):
    return list(dask_scheduler.workers)


def dtype_keyword(dtype_name):
    return "bfloat16" if dtype_name == "bfloat16" else None


# Every dtype is compared in test_dask.py; here, one of each kind.
DISTRIBUTED_DTYPES = ["float32", "bfloat16", "float16", "float64", "int16", "uint8"]


def test_results_through_worker_processes_equal_eager(client):
    started_with = workers(client)
    rng = np.random.default_rng(2026)
    graphs = {}
    for dtype_name in DISTRIBUTED_DTYPES:
        kw = dict(dtype=dtype_keyword(dtype_name))
        a = random_values(rng, dtype_name, (10, 7, 11))
        b = random_values(rng, dtype_name, (7, 1))
        la, lb = da.from_array(a, chunks=(4, 4, 6)), da.from_array(b, chunks=(3, 1))  # 18 blocks
        graphs[dtype_name, "squared_difference"] = (sd.squared_difference(la, lb, **kw),
                                                    sqdiff.squared_difference(a, b, **kw))
        graphs[dtype_name, "subtract"] = (sd.subtract(la, lb, **kw), sqdiff.subtract(a, b, **kw))
        graphs[dtype_name, "pdpd"] = (sd.squared_difference(la, lb, broadcast="pdpd", broadcast_axis=1, **kw),
                                      sqdiff.squared_difference(a, b, broadcast="pdpd", broadcast_axis=1, **kw))
        graphs[dtype_name, "mean"] = (sd.mean_squared_difference(la, lb, split_every=2, **kw),
                                      sqdiff.mean_squared_difference(a, b, **kw))
        graphs[dtype_name, "mean axis (0, 2)"] = (sd.mean_squared_difference(la, lb, (0, 2), split_every=3, **kw),
                                                  sqdiff.mean_squared_difference(a, b, (0, 2), **kw))
        graphs[dtype_name, "sum axis 1"] = (sd.sum_squared_difference(la, lb, 1, keepdims=True, **kw),
                                            sqdiff.sum_squared_difference(a, b, 1, keepdims=True, **kw))
    with distributed.get_task_stream(client) as tasks:
        results = client.compute([lazy for lazy, _ in graphs.values()], sync=True)
    for ((dtype_name, name), (_, want)), got in zip(graphs.items(), results):
        out_name = "bfloat16" if dtype_name == "bfloat16" and want.dtype == np.uint16 else want.dtype.name
        assert_same_bits(got, want, out_name, what=f"{dtype_name} {name}")
    assert len({task["worker"] for task in tasks.data}) == 2, "the tasks did not run on both workers"
    assert workers(client) == started_with, "a worker was restarted"


ROWS, COLUMNS, CHUNK_ROWS = 16384, 32768, 256  # 2 GiB of float32 each, in chunks of 32 MiB


def write_zarr(path, seed):
    """A 2 GiB float32 zarr array, written a chunk at a time (never whole in memory)."""
    array = zarr.open(str(path), mode="w", shape=(ROWS, COLUMNS), chunks=(CHUNK_ROWS, COLUMNS), dtype="f4",
                      compressor=None)
    for start in range(0, ROWS, CHUNK_ROWS):
        rng = np.random.default_rng([seed, start])
        block = rng.random((CHUNK_ROWS, COLUMNS), dtype=np.float32)
        block *= np.float32(1 + start / ROWS)  # not one distribution throughout
        array[start:start + CHUNK_ROWS] = block
    return array


def test_mse_of_arrays_larger_than_the_workers_memory(client, tmp_path):
    """The MSE of two 2 GiB zarr arrays on workers of 400 MiB each finishes, and
    is the exact result: the eager partial sums of every chunk, added exactly."""
    started_with = workers(client)
    try:
        za, zb = write_zarr(tmp_path / "a.zarr", 1), write_zarr(tmp_path / "b.zarr", 2)
        assert za.nbytes == 2 * 2**30 and za.nbytes > 4 * WORKER_MEMORY_BYTES
        a, b = da.from_zarr(str(tmp_path / "a.zarr")), da.from_zarr(str(tmp_path / "b.zarr"))
        lazy = sd.mean_squared_difference(a, b)
        got = client.compute(lazy, sync=True)

        # The reference, in this process, one chunk at a time.
        total, estimate = None, 0.0
        for start in range(0, ROWS, CHUNK_ROWS):
            block_a, block_b = za[start:start + CHUNK_ROWS], zb[start:start + CHUNK_ROWS]
            part = sqdiff._partial_sum_squared_difference(block_a, block_b)
            total = part if total is None else sqdiff._combine_partial_sums(np.float32, total, part)
            d = (block_a.astype(np.float64) - block_b).reshape(-1)
            estimate += float(np.dot(d, d))  # float64, rounded per chunk: close, not exact
        want = sqdiff._finish_partial_sums(np.float32, total, ROWS * COLUMNS, mean=True)
        assert got.dtype == np.float32 and got.shape == ()
        assert got.tobytes() == want.tobytes(), (got, want)
        estimate /= ROWS * COLUMNS
        assert abs(float(got) - estimate) <= 1e-6 * estimate, (got, estimate)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)
    assert workers(client) == started_with, "a worker ran out of memory and was restarted"
