"""The task engine: every task is reported exactly once, with its value or its error, on every
scheduler, including when a task raises or kills its own process."""

from __future__ import annotations

import os

import pytest

from certdp.errors import InvalidArgument
from certdp.sweep.engine import TaskDone, parse_scheduler, run_tasks, worker_count


def _square_or_fail(x: int) -> int:
    if x == 3:
        raise ValueError("three is refused")
    return x * x


def _die_on_two(x: int) -> int:
    if x == 2:
        os._exit(1)  # a hard crash of the worker process, no exception to catch
    return x


def collect(fn, items, **kw) -> dict[int, TaskDone]:
    seen: dict[int, TaskDone] = {}

    def on_done(d: TaskDone) -> None:
        assert d.index not in seen  # exactly once
        seen[d.index] = d

    run_tasks(fn, items, on_done, **kw)
    assert sorted(seen) == list(range(len(items)))
    return seen


@pytest.mark.parametrize("scheduler", ["serial", "processes"])
def test_values_and_errors_are_reported_once_each(scheduler):
    items = list(range(6))
    seen = collect(_square_or_fail, items, scheduler=scheduler, workers=None if scheduler == "serial" else 2)
    for i, d in seen.items():
        if i == 3:
            assert d.value is None and d.error.startswith("ValueError: three is refused")
        else:
            assert d.value == i * i and d.error is None


def test_a_dead_process_pool_fails_the_unfinished_tasks_only():
    pytest.importorskip("dask")
    seen = collect(_die_on_two, list(range(4)), scheduler="processes", workers=1)
    failed = {i for i, d in seen.items() if d.error is not None}
    assert 2 in failed and all("the process pool broke" in seen[i].error for i in failed)
    assert all(seen[i].value == i for i in seen if i not in failed)


def test_scheduler_and_worker_arguments():
    assert parse_scheduler("tcp://10.0.0.5:8786") == "tcp://10.0.0.5:8786"
    for bad in ("tcp://host", "tcp://:1", "http://h:1", "tcp://h:70000", "yarn"):
        with pytest.raises(InvalidArgument, match="scheduler="):
            parse_scheduler(bad)
    assert worker_count("local", None) == (os.cpu_count() or 1) and worker_count("tcp://h:1", None) is None
    with pytest.raises(InvalidArgument, match="workers=300 must be in"):
        worker_count("local", 300)
