"""The timer the scripts under benchmarks/ share: seconds per synchronised call, after a warm-up."""

from __future__ import annotations

import statistics
import time


def rep_times(fn, reps: int, sync) -> list[float]:
    """Seconds of each of `reps` calls of fn, each followed by sync(), after one warm-up call."""
    fn()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return times


def median_time(fn, reps: int, sync) -> float:
    return statistics.median(rep_times(fn, reps, sync))
