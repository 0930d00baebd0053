"""The suite runs numpy's and scipy's BLAS on one thread per process (tests/conftest.py): with two
pytest-xdist workers on two cores, OpenBLAS's own threads made small products several times slower."""

import ctypes
import os
import sys

import numpy as np
import pytest


def _openblas_thread_counts() -> dict[str, int]:
    """Every OpenBLAS loaded in this process (numpy's, scipy's) and its thread count, read from the library."""
    import scipy.linalg  # noqa: F401  (loads scipy's OpenBLAS, if it has its own)

    np.ones(4) @ np.ones(4)
    counts = {}
    for line in open("/proc/self/maps"):
        path = line.split()[-1]
        if "openblas" not in path.lower() or ".so" not in path or path in counts:
            continue
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
                     "openblas_get_num_threads64_", "openblas_get_num_threads"):
            getter = getattr(lib, name, None)
            if getter is not None:
                counts[path] = int(getter())
                break
    return counts


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_blas_runs_on_one_thread_in_the_test_process():
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1" and os.environ["OMP_NUM_THREADS"] == "1"
    counts = _openblas_thread_counts()
    if not counts:
        pytest.skip("no OpenBLAS loaded (numpy built against another BLAS)")
    assert set(counts.values()) == {1}, counts
