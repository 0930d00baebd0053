"""Run the docs notebooks top to bottom and store them with their outputs, which the site shows.

    python docs/run_notebooks.py                 # all of docs/notebooks/*.ipynb
    python docs/run_notebooks.py 03_multistability

Each runs in a fresh kernel with one thread; a cell that raises, or a notebook over BUDGET_S seconds,
stops with the notebook's name and the reason, and nothing is written for it. The sha256 of the code
cells is stored in the notebook's metadata, so tests/test_notebooks.py can tell a notebook edited without
being rerun; it also reruns them and compares the outputs with the stored ones.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "docs" / "notebooks"
BUDGET_S = 60.0              # per notebook: CPU seconds of its kernel (user + system), as on a quiet 2-core machine
HANG_S = 300.0               # wall-clock limit per cell: a cell this slow is stuck, whatever the machine's load


def code_sha256(nb) -> str:
    """Hash of the code cells' sources: what the stored outputs were computed from."""
    h = hashlib.sha256()
    for cell in nb.cells:
        if cell.cell_type == "code":
            h.update(cell.source.encode() + b"\0")
    return h.hexdigest()


def execute(nb, name: str, budget_s: float = BUDGET_S) -> tuple[float, float]:
    """Execute ``nb`` in place in a fresh kernel; returns (CPU seconds of the kernel, wall seconds).

    The budget is on CPU time, read from the finished kernel process (``RUSAGE_CHILDREN``), because the
    wall time of a shared machine says more about the other jobs on it than about the notebook.
    Raises RuntimeError naming the notebook when a cell raises, hangs, or the kernel used more than
    ``budget_s`` CPU seconds.
    """
    import resource

    import nbclient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    for key, value in (("PYTHONPATH", str(ROOT)), ("OMP_NUM_THREADS", "1"), ("MKL_NUM_THREADS", "1"),
                       ("TOKENIZERS_PARALLELISM", "false"),
                       ("TQDM_DISABLE", "1"), ("TRANSFORMERS_VERBOSITY", "error"), ("MPLBACKEND", "module://matplotlib_inline.backend_inline")):
        os.environ[key] = value if key != "PYTHONPATH" else os.pathsep.join(
            [value] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    t0, cpu0 = time.perf_counter(), _children_cpu(resource)
    with tempfile.TemporaryDirectory() as work:
        client = nbclient.NotebookClient(nb, timeout=HANG_S, kernel_name="python3", record_timing=False,
                                         resources={"metadata": {"path": work}})
        try:
            client.execute()
        except CellTimeoutError as exc:
            raise RuntimeError(f"{name}: a cell ran more than {HANG_S:.0f} s (wall clock)") from exc
        except CellExecutionError as exc:
            raise RuntimeError(f"{name}: a cell raised:\n{exc}") from exc
    wall, cpu = time.perf_counter() - t0, _children_cpu(resource) - cpu0
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = coalesce_streams(cell.outputs)
    if cpu > budget_s:
        raise RuntimeError(f"{name}: its kernel used {cpu:.1f} CPU seconds, over the {budget_s:.0f} s budget")
    return cpu, wall


def coalesce_streams(outputs: list) -> list:
    """Consecutive prints to one stream as one output: how the kernel chunks them depends on timing."""
    merged = []
    for o in outputs:
        if merged and o.get("output_type") == "stream" and merged[-1].get("output_type") == "stream" \
                and merged[-1]["name"] == o["name"]:
            merged[-1]["text"] += o["text"]
        else:
            merged.append(o)
    return merged


def _children_cpu(resource) -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str]) -> int:
    import nbformat

    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    if argv:
        paths = [p for p in paths if p.stem in argv or p.name in argv]
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        cpu, wall = execute(nb, path.stem)
        nb.metadata["grpo_theory"] = {"code_sha256": code_sha256(nb)}
        nbformat.write(nb, path)
        print(f"{path.stem}: {cpu:.1f} CPU s, {wall:.1f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
