"""CPU seconds per figure of `grpo-theory figures --force`: its tables (the numbers) and drawing and
saving its PNG and PDF, in one process, in the build's order (caches shared between figures, e.g.
Figures 8 and 15, count for the first that fills them).

    PYTHONPATH=. python benchmarks/figure_cpu.py            # every figure (Figure 9 needs --trained: skipped)
    PYTHONPATH=. python benchmarks/figure_cpu.py 8 13 19    # only these

CPU time (``time.process_time``), not wall time: on a shared machine it is what the figure costs.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from grpo_theory import plotting  # noqa: E402
from grpo_theory.figures import build  # noqa: E402
from grpo_theory.figures._registry import FIGURES  # noqa: E402
from grpo_theory.figures._spec import FigureInputs, FigureSkipped  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


def main(argv: list[str]) -> None:
    only = {int(a) for a in argv} or None
    inputs = FigureInputs(results=RESULTS, trained=None)
    out = Path(tempfile.mkdtemp(prefix="figure_cpu_"))
    total_tables = total_draw = 0.0
    for spec in FIGURES:
        if only and spec.number not in only:
            continue
        with matplotlib.rc_context(plotting.STYLE):
            t0 = time.process_time()
            try:
                tables = spec.tables(inputs)
            except FigureSkipped as why:
                print(f"{spec.number:3d} {spec.slug:28s} skipped: {why}")
                continue
            t1 = time.process_time()
            fig = spec.render(tables)
            for i, f in enumerate(fig if isinstance(fig, tuple) else (fig,)):
                build._save(f, out / f"fig{spec.number}_{i}")
            t2 = time.process_time()
        total_tables += t1 - t0
        total_draw += t2 - t1
        print(f"{spec.number:3d} {spec.slug:28s} tables {t1 - t0:6.2f} s   draw+save {t2 - t1:6.2f} s", flush=True)
    print(f"total: tables {total_tables:.1f} s, draw+save {total_draw:.1f} s, "
          f"process CPU {time.process_time():.1f} s (imports included)")


if __name__ == "__main__":
    main(sys.argv[1:])
