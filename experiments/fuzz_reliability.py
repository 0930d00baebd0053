"""Fuzz the theory engine: 10^4 random questions, each checked on an independent path.

    python experiments/fuzz_reliability.py [--cases 10000] [--out runs/fuzz/reliability_fuzz.csv]
    python experiments/fuzz_reliability.py --kl [--first 0] --cases 300 [--out runs/fuzz/kl_fuzz.csv]

The cases and the checks are those of the test suite (tests/fuzz_cases.py): K <= 6 outputs,
ties, noisy reward laws, both penalties and normalisations, ddof 0/1, eps 0/1e-4, G up to 10^4
and inf. Writes one row per case (seed, outcome, residuals, seconds) and prints the summary that
docs/reliability.md reports. Rows are appended as they finish: a killed run resumes where it stopped.
The summary by (G, penalty, normalisation) and every case that is not "ok" go to docs/results/.

``--kl`` runs the second half instead (tests/fuzz_kl_cases.py: KL estimators and placements, clamps,
faces, trees, family fields), seeds ``--first`` to ``--cases - 1``, each within ``--budget`` seconds of CPU
(300; a case over it is a "timeout" row), prints its outcome counts, the CPU time per case and every
crash, silent answer or wrong end point (a converged answer that is not where the independent integration
of the flow on all output logits from pi_ref ends: ``WRONG-END``), and writes
docs/results/kl_fuzz_summary.csv (per outcome: cases, meaning, CPU median and max) and
docs/results/kl_fuzz_not_ok.csv.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from fuzz_cases import check_case  # noqa: E402
from fuzz_kl_cases import check_kl_case, kl_case_row  # noqa: E402


class CaseTimeout(BaseException):
    """A case over its CPU budget (a BaseException, so that the checks' ``except Exception`` lets it through)."""


def _with_cpu_budget(check, seconds: float):  # the KL half's cases (kl_case_row)
    """``check`` whose case is cut after ``seconds`` of this process's CPU time (``ITIMER_PROF``): the row says
    ``outcome="timeout"``. A slow case is reported as slow, not waited on for an hour (seed 1991: three answers
    with a noisy law and abs in the reward at G = 16, so nine shaped levels and ~7e5 count vectors a
    ``P_G``, ran for over 20 minutes)."""
    import signal

    def alarm(_sig, _frame):
        raise CaseTimeout

    def run(seed):
        old = signal.signal(signal.SIGPROF, alarm)
        signal.setitimer(signal.ITIMER_PROF, seconds)
        t0 = time.process_time()
        try:
            return check(seed)
        except CaseTimeout:
            return {**kl_case_row(seed), "outcome": "timeout", "seconds": time.process_time() - t0,
                    "detail": f"over the budget of {seconds:g} s of CPU"}
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, old)

    return run


def _run_seeds(check, seeds, out: Path, desc: str) -> pd.DataFrame:
    """``check(seed)`` for every seed not yet in ``out``, each row appended as it finishes (a rerun resumes)."""
    done = set(pd.read_csv(out).seed) if out.exists() else set()
    # a resumed file keeps its own columns (one written before a column was added gets NaN there)
    header = list(pd.read_csv(out, nrows=0).columns) if done else None
    with out.open("a", newline="") as fh:
        writer = None
        for seed in tqdm([s for s in seeds if s not in done], desc=desc):
            row = check(seed)
            if writer is None:
                writer = csv.DictWriter(fh, fieldnames=header or list(row), extrasaction="ignore", restval="")
                if not done:
                    writer.writeheader()
            writer.writerow(row)
            fh.flush()
    return pd.read_csv(out)


#: What each outcome of the KL half means (docs/reliability.md prints the same).
KL_OUTCOMES = {
    "ok": "converged off the faces; the drift on all output logits vanishes; reported stable => the full-space "
          "Jacobian has no eigenvalue of positive real part and explicit Euler on all logits stays",
    "ok-face": "a point on a face (or a limit vertex) whose absent answers all drift outward (KKT)",
    "ok-jump": "a jump of the field (a clamp, abs's kink) reported stable where nudging any logit makes it drift back",
    "flagged": "converged=False with the reason in the message",
    "error": "InvalidInputError: an option not modelled, or an enumeration over the limit",
    "CRASH": "any other exception, or a NaN the engine made itself",
    "SILENT": "converged=True but not stationary, a repelling face, or a point reported stable that is not",
    "WRONG-END": "converged=True, passing the checks above, but not where an independent integration of the flow on "
                 "all output logits from pi_ref ends (tests/fuzz_kl_cases.end_check: tests/_full_space_flow.flow_end "
                 "to t = 1e8, and on to 1e10 and 1e12 where it is not within 1e-3 there; max-norm distance over "
                 "1e-3 at the last)",
    "timeout": "the solve and check did not finish within the CPU budget per case (--budget)",
}


def kl_main(cases: int, first: int, out: Path, budget: float = 300.0) -> None:
    """The KL half of the fuzz (see the module doc), resumable like the first half.

    Prints the outcome counts (``WRONG-END``: the independent end check disagrees), the end-check verdicts,
    the per-case CPU time (solve + independent check) and every crash, silent answer or wrong end; writes
    ``docs/results/kl_fuzz_summary.csv`` (per outcome: cases, what it means, CPU median and max) and
    ``docs/results/kl_fuzz_not_ok.csv`` (every case that is not ok, ok-face or ok-jump).
    """
    df = _run_seeds(_with_cpu_budget(check_kl_case, budget), range(first, cases), out, "kl fuzz")
    df = df[(df.seed >= first) & (df.seed < cases)]
    cpu = df.seconds + (df.check_seconds.fillna(0.0) if "check_seconds" in df else 0.0)
    print(f"{len(df)} cases, seeds {df.seed.min()}-{df.seed.max()}; CPU seconds per case (solve + check): "
          f"median {cpu.median():.3f}, max {cpu.max():.1f} (seed {int(df.seed[cpu.idxmax()])}), total {cpu.sum():.0f}")
    print(df.outcome.value_counts().to_string())
    if "end" in df:
        # the end check (sequence level, converged ok/ok-face/ok-jump answers): same, WRONG or unchecked
        print("end points checked independently: " + ", ".join(
            f"{n} {k}" for k, n in df.end.fillna("").replace("", "not checked").value_counts().items()))
    bad = df[df.outcome.isin(["CRASH", "SILENT", "WRONG-END"])]
    for _, r in bad.iterrows():
        print(f"seed {r.seed}: {r.outcome} K={r.K} G={r.G} tree={r.tree} {r.estimator}/{r.placement} "
              f"clamps={r.clamps} {r.advantage}: {str(r.detail)[-240:]}")
    results = ROOT / "docs" / "results"
    summary = (df.assign(cpu=cpu).groupby("outcome")
               .agg(cases=("seed", "size"), cpu_median=("cpu", "median"), cpu_max=("cpu", "max"))
               .reindex([o for o in KL_OUTCOMES if o in set(df.outcome)]).reset_index())
    summary.insert(2, "meaning", summary.outcome.map(KL_OUTCOMES))
    summary.to_csv(results / "kl_fuzz_summary.csv", index=False, float_format="%.3g")
    df[~df.outcome.isin(["ok", "ok-face", "ok-jump"])].to_csv(results / "kl_fuzz_not_ok.csv", index=False,
                                                              float_format="%.6g")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--out", default=None)
    ap.add_argument("--kl", action="store_true", help="the KL/face/tree/family half (tests/fuzz_kl_cases.py)")
    ap.add_argument("--first", type=int, default=0, help="first seed (--kl only)")
    ap.add_argument("--budget", type=float, default=300.0, help="CPU seconds per case before it counts as a "
                    "timeout (--kl only)")
    args = ap.parse_args()
    out = Path(args.out or ROOT / "runs" / "fuzz" / ("kl_fuzz.csv" if args.kl else "reliability_fuzz.csv"))
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.kl:
        kl_main(args.cases, args.first, out, args.budget)
        return
    t0 = time.perf_counter()
    df = _run_seeds(check_case, range(args.cases), out, "fuzz")
    print(f"{len(df)} cases ({time.perf_counter() - t0:.0f} s this run)")
    print(df.outcome.value_counts().to_string())
    ok = df[df.outcome == "ok"]
    print(f"worst library residual of a converged point: {ok.residual.max():.2e}")
    print(f"worst independent residual: {ok.independent.max():.2e}; worst ratio to its tolerance: "
          f"{(ok.independent / ok.tolerance).max():.2e}")
    print(f"seconds per case: median {df.seconds.median():.3f}, max {df.seconds.max():.2f}")
    print(df[df.outcome.isin(['flagged', 'error', 'FAIL'])].groupby(['outcome']).detail
          .agg(lambda d: d.str.slice(0, 60).value_counts().head(3).to_dict()).to_string())
    results = ROOT / "docs" / "results"
    df["G"] = df.G.astype(str)
    summary = (df.groupby(["G", "penalty", "normalization"])
               .agg(cases=("seed", "size"), seeds=("seed", lambda s: f"{s.min()}-{s.max()}"),
                    ok=("outcome", lambda o: int((o == "ok").sum())),
                    ok_limit=("outcome", lambda o: int((o == "ok-limit").sum())),
                    flagged=("outcome", lambda o: int((o == "flagged").sum())),
                    error=("outcome", lambda o: int((o == "error").sum())),
                    failed=("outcome", lambda o: int((o == "FAIL").sum())),
                    worst_residual=("residual", "max"), worst_independent=("independent", "max"),
                    max_seconds=("seconds", "max"))
               .reset_index())
    summary.to_csv(results / "reliability_summary.csv", index=False, float_format="%.3g")
    df[~df.outcome.isin(["ok", "ok-limit"])].to_csv(results / "reliability_not_ok.csv", index=False,
                                                    float_format="%.6g")


if __name__ == "__main__":
    main()
