"""Runs release the GIL: two Python threads' runs overlap in time. Each run's
[start, end] is taken inside the module, around the runtime's Model::run,
where the GIL is released; if it were held, no two such intervals could
overlap. Concurrent runs also give the same results as serial ones."""

import threading

import numpy as np

import modelc
from modelc import _core
from conftest import mlp_reference

RUNS = 12


def run_in_threads(models, inputs):
    barrier = threading.Barrier(len(models))
    intervals = [[] for _ in models]
    results = [[] for _ in models]
    errors = []

    def work(i):
        try:
            barrier.wait()
            for _ in range(RUNS):
                results[i].append(models[i](inputs[i]))
                record = _core._last_run()
                intervals[i].append((record["started_ns"],
                                     record["finished_ns"]))
        except Exception as e:  # reported below, in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in
               range(len(models))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return intervals, results


def overlap_ns(a, b):
    return sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in a
               for s2, e2 in b)


def test_two_threads_run_at_once(mlp):
    path, weights = mlp
    # One CPU thread per model, so that two runs can use two cores at once.
    models = [modelc.load(path, threads=1) for _ in range(2)]
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((64, 784), np.float32) for _ in range(2)]
    intervals, results = run_in_threads(models, inputs)
    assert overlap_ns(intervals[0], intervals[1]) > 0, intervals
    for x, ys in zip(inputs, results):
        np.testing.assert_allclose(ys[0], mlp_reference(x, weights),
                                   rtol=1e-4, atol=1e-4)
        for y in ys[1:]:
            np.testing.assert_array_equal(y, ys[0])


def test_one_model_from_two_threads(mlp):
    path, weights = mlp
    m = modelc.load(path, threads=1)
    rng = np.random.default_rng(4)
    inputs = [rng.standard_normal((64, 784), np.float32) for _ in range(2)]
    intervals, results = run_in_threads([m, m], inputs)
    assert overlap_ns(intervals[0], intervals[1]) > 0, intervals
    for x, ys in zip(inputs, results):
        want = m(x)
        for y in ys:
            np.testing.assert_array_equal(y, want)
