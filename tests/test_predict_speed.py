"""Speed of the finite-time fit: the 10^4-prompt goal (slow) and the stored benchmark numbers the docs state."""

import importlib.util
import json
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RES = ROOT / "docs" / "results"


def _bench(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_measured_fit_on_ten_thousand_prompts_within_ten_cpu_seconds():
    """``predict(..., measured=)`` with the one-parameter model on 10^4 prompts (128 base samples each, half
    measured with 64): at most 10 s of CPU, the goal of the finite-time predictor (benchmarks/bench_predict_finite.py,
    its ``fixed_n`` dataset)."""
    from grpo_theory.predict import predict

    obj, base, measured = _bench("bench_predict_finite")._dataset(10_000, False)
    start = time.process_time()
    pr = predict(base, obj, measured=measured, progress=False)
    cpu = time.process_time() - start
    assert pr.table.pred_finite.notna().all() and pr.table.pred_finite_conformal_lo.notna().all()
    assert cpu <= 10.0, cpu


def test_docs_state_the_stored_kernel_costs():
    """docs/performance.md's kernel-cost sentence carries docs/results/predict_kernel_speed.json's numbers."""
    res = json.loads((RES / "predict_kernel_speed.json").read_text())
    text = " ".join((ROOT / "docs" / "performance.md").read_text().split())
    for n, row in res.items():
        base = row["one_parameter_cpu_s"]
        for name in ("full_rank", "rank_32"):
            r = row[name]
            assert f"{r['kernel_cpu_ms_per_prompt']:.2f} ms" in text, (n, name)
            assert f"{r['ratio_cpu']:.2f}x" in text, (n, name)
        assert f"N = {int(n):,}: {base:.2f} s" in text, n


def test_docs_state_the_stored_ten_thousand_prompt_timings():
    """docs/predict.md and docs/performance.md carry docs/results/predict_finite_speed.json's CPU seconds and
    ratios; docs/predict.md's per-prompt kernel costs are predict_kernel_speed.json's, rounded."""
    res = json.loads((RES / "predict_finite_speed.json").read_text())
    predict_md = " ".join((ROOT / "docs" / "predict.md").read_text().split())
    perf = " ".join((ROOT / "docs" / "performance.md").read_text().split())
    fx, vx = res["fixed_n"], res["varied_n"]
    for text in (predict_md, perf):
        assert f"{fx['with_measured_cpu_s']:.2f} s" in text and f"{vx['with_measured_cpu_s']:.2f} s" in text
    assert f"{fx['ratio_cpu']:.2f} times the stationary prediction's {fx['stationary_cpu_s']:.2f} s" in predict_md
    assert f"{vx['ratio_cpu']:.2f} times its {vx['stationary_cpu_s']:.2f} s" in predict_md
    assert f"{fx['ratio_cpu']:.2f}x the stationary prediction alone" in perf and f"{vx['ratio_cpu']:.2f}x." in perf
    assert fx["with_measured_cpu_s"] <= 10 and vx["with_measured_cpu_s"] <= 10
    kern = json.loads((RES / "predict_kernel_speed.json").read_text())
    full = [kern[n]["full_rank"]["kernel_cpu_ms_per_prompt"] for n in ("250", "500", "1000")]
    assert f"added {full[0]:.1f}, {full[1]:.1f} and {full[2]:.0f} ms" in predict_md
    assert all(kern[n]["rank_32"]["kernel_cpu_ms_per_prompt"] < 1 for n in kern)
