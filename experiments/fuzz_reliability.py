"""Fuzz the theory engine: 10^4 random questions, each checked on an independent path.

    python experiments/fuzz_reliability.py [--cases 10000] [--out runs/fuzz/reliability_fuzz.csv]
    python experiments/fuzz_reliability.py --kl [--first 0] --cases 300 [--out runs/fuzz/kl_fuzz.csv]
    python experiments/fuzz_reliability.py [--kl] --seeds 9043,9264 --out F   (or --seeds @file)

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

``--seeds`` runs (or reruns) exactly the seeds given, ``9043,9264`` or ``@file`` (a file of seeds: integers separated
by commas, spaces or new lines, ``#`` starting a comment): the rows of ``--out`` are keyed by seed, a seed's new row
replaces its old one in place (the run says so, with the old outcome and end) and a new seed's row is appended; the
file is rewritten after each case, so a killed rerun keeps what it finished. It prints each seed's outcome and end
and their counts, and leaves the tables in docs/results/ (those summarise a whole run) as they are.

``--recheck-unconfirmed`` reruns the rows of ``--out`` whose converged end the independent check did not confirm
at its budget (end ``unchecked`` or ``late``) and the cases that did not finish (``timeout``), with every budget of
the end check (evaluations of the field, CPU seconds of each integration) times ``--recheck-budget`` (10), and the
case's CPU budget (``--budget``) times the same factor. Each such row keeps its first verdict and gains the
recheck's (``recheck_budget``, ``recheck_outcome``, ``recheck_end``, ``recheck_detail``, ``recheck_seconds``,
``recheck_check_seconds``); a row already rechecked at that factor is skipped, so a killed recheck resumes. An end
the recheck cannot decide either stays ``unchecked``: it is never counted as confirmed.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import sys
import time
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from fuzz_cases import check_case  # noqa: E402
from fuzz_kl_cases import check_kl_case, kl_case_row  # noqa: E402

from grpo_theory.errors import InvalidInputError  # noqa: E402


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


def parse_seeds(spec: str) -> list[int]:
    """The seeds of ``--seeds``: ``"9043,9264"``, or ``"@file"`` for a file of seeds (integers separated by commas,
    spaces or new lines; ``#`` starts a comment to the end of its line). A seed given twice is run once (the first
    place it appears); a seed must be a non-negative integer.

    Raises
    ------
    InvalidInputError
        Naming the file that cannot be read, the token that is not a non-negative integer, or an empty list.
    """
    where = "--seeds"
    text = spec
    if spec.startswith("@"):
        path = Path(spec[1:])
        try:
            text = path.read_text()
        except OSError as exc:
            raise InvalidInputError(f"--seeds @{path}: cannot read the file of seeds ({exc.strerror or exc})") from None
        where = f"--seeds @{path}"
        text = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    seeds: list[int] = []
    for token in re.split(r"[,\s]+", text.strip()):
        if not token:
            continue
        if not re.fullmatch(r"\+?\d+", token):
            raise InvalidInputError(f"{where}: {token!r} is not a seed; expected non-negative integers separated by "
                                    "commas, e.g. 9043,9264")
        seed = int(token)
        if seed not in seeds:
            seeds.append(seed)
    if not seeds:
        raise InvalidInputError(f"{where}: no seeds given ({spec!r}); expected non-negative integers separated by "
                                "commas, e.g. 9043,9264, or @file")
    return seeds


def _seed_of(row: dict) -> int | None:
    """The seed of a row read back from a results file (None for a row without one)."""
    try:
        return int(float(row.get("seed") or ""))
    except ValueError:
        return None


def rerun_seeds(check, seeds, out: Path, desc: str = "rerun", log=tqdm.write, merge=None) -> list[dict]:
    """``check(seed)`` for exactly ``seeds``, each row written into ``out`` as it finishes: rows are keyed by seed,
    so a seed's row replaces the row (or rows) ``out`` holds for it, in the place of the first, and a new seed's
    row is appended. ``out`` is rewritten whole after each case (through a temporary file and ``os.replace``):
    the other rows keep their text, a killed rerun keeps the rows it finished. Columns ``out`` lacks are added at
    the end (empty in the old rows). ``log`` gets one line a seed: its outcome and end, and the row it replaced.
    ``merge(old, row)``, where given, makes the row written from the seed's old row (a dict of text, or None) and
    the new one (the recheck keeps the first verdict beside its own). Returns the new rows."""
    new_rows = []
    for seed in tqdm(list(seeds), desc=desc):
        row = check(seed)
        header, rows = _read_rows(out)
        old = [r for r in rows if _seed_of(r) == seed]
        written = merge(old[0] if old else None, row) if merge is not None else row
        header = header + [k for k in written if k not in header]
        text = {k: ("" if v is None else v) for k, v in written.items()}
        if old:           # in the place of its first old row; any other row of the seed dropped
            rows = [text if r is old[0] else r for r in rows if r is old[0] or _seed_of(r) != seed]
        else:
            rows.append(text)
        _write_rows(out, header, rows)
        now = _verdict(written if merge is None else row)
        if merge is not None:
            log(f"seed {seed}: {_verdict(old[0]) if old else 'no row'} -> recheck: {now}")
        elif old:
            was = "; ".join(_verdict(r) for r in old)
            log(f"seed {seed}: {now} (replaces its {'row' if len(old) == 1 else f'{len(old)} rows'} in {out}: "
                f"was {was})")
        else:
            log(f"seed {seed}: {now} (new row in {out})")
        new_rows.append(row)
    return new_rows


#: Ends of a converged answer that a recheck with a larger budget may decide (``late``: confirmed, but only past
#: ``END_T``) and the outcome of a case that did not finish within its CPU budget.
RECHECK_ENDS, RECHECK_OUTCOMES = ("unchecked", "late"), ("timeout",)
#: The columns a recheck adds to a row (the first verdict's columns are kept as they are).
RECHECK_COLUMNS = ("recheck_budget", "recheck_outcome", "recheck_end", "recheck_detail", "recheck_seconds",
                   "recheck_check_seconds")


def unconfirmed_seeds(out: Path, factor: float) -> list[int]:
    """The seeds of ``out`` whose end was not confirmed (end in ``RECHECK_ENDS``) or whose case did not finish
    (outcome in ``RECHECK_OUTCOMES``), less those already rechecked at budget ``factor``."""
    _, rows = _read_rows(out)
    seeds = []
    for r in rows:
        if r.get("end", "") not in RECHECK_ENDS and r.get("outcome", "") not in RECHECK_OUTCOMES:
            continue
        done = r.get("recheck_budget", "")
        if done and r.get("recheck_outcome", "") and float(done) == factor:
            continue
        seed = _seed_of(r)
        if seed is not None and seed not in seeds:
            seeds.append(seed)
    return seeds


def _recheck_merge(factor: float):
    """``merge`` for :func:`rerun_seeds`: the old row as it was, the recheck's verdict in ``RECHECK_COLUMNS``."""
    def merge(old, row):
        base = dict(old) if old is not None else dict(row)
        base.update(recheck_budget=factor, recheck_outcome=row.get("outcome", ""), recheck_end=row.get("end", ""),
                    recheck_detail=row.get("detail", ""), recheck_seconds=row.get("seconds", ""),
                    recheck_check_seconds=row.get("check_seconds", ""))
        return base
    return merge


def recheck_main(check, out: Path, factor: float, desc: str) -> list[dict]:
    """``--recheck-unconfirmed``: ``check(seed)`` (at ``factor`` times the end check's budgets) for every seed of
    :func:`unconfirmed_seeds`, its verdict written beside the first one; prints how the verdicts moved."""
    if not out.exists():
        raise InvalidInputError(f"--recheck-unconfirmed reads the rows of --out, and {out} does not exist")
    seeds = unconfirmed_seeds(out, factor)
    print(f"{len(seeds)} rows of {out} to recheck at {factor:g}x the end check's budget"
          + (f": seeds {', '.join(map(str, seeds))}" if seeds else ""))
    rows = rerun_seeds(check, seeds, out, desc, merge=_recheck_merge(factor))
    moved = pd.Series([_verdict(r) for r in rows]).value_counts()
    if len(moved):
        print("recheck verdicts: " + ", ".join(f"{n} {k}" for k, n in moved.items()))
    return rows


def _verdict(row: dict) -> str:
    """A row's outcome and end, as the rerun's log prints them."""
    end = str(row.get("end", "") or "")
    end = "" if end == "nan" else end
    return f"{row.get('outcome', '')}" + (f", end {end}" if end else "")


def _read_rows(path: Path) -> tuple[list[str], list[dict]]:
    """The header and rows (dicts of the file's own text) of a results CSV; empty for a missing or empty file."""
    if not path.exists() or path.stat().st_size == 0:
        return [], []
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


def _write_rows(path: Path, header: list[str], rows: list[dict]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, extrasaction="ignore", restval="")
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


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
                 "1e-3 at the last; where that integration stops, the robust one, jumps mollified and collapsed "
                 "answers frozen with their limit, decides or gives a second opinion)",
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
    if "recheck_end" in df and df.recheck_outcome.notna().any():
        # a recheck (--recheck-unconfirmed) decides where the first pass could not; an end it cannot decide either
        # stays unchecked
        rechecked = df.recheck_outcome.notna() & (df.recheck_outcome.astype(str) != "")
        final = df.end.where(~rechecked, df.recheck_end).fillna("").replace("", "not checked")
        print(f"after the recheck of {int(rechecked.sum())} rows (budget x{df.recheck_budget.dropna().max():g}): "
              + ", ".join(f"{n} {k}" for k, n in final.value_counts().items()))
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


def seeds_main(check, seeds: list[int], out: Path, desc: str) -> list[dict]:
    """``--seeds``: run exactly ``seeds`` into ``out`` (:func:`rerun_seeds`), then print their outcome and end counts."""
    rows = rerun_seeds(check, seeds, out, desc)
    outcomes = pd.Series([r["outcome"] for r in rows]).value_counts()
    ends = pd.Series([r.get("end") or "not checked" for r in rows]).value_counts()
    print(f"{len(rows)} seed{'' if len(rows) == 1 else 's'} run into {out}: " + ", ".join(f"{n} {k}" for k, n in outcomes.items()) +
          "; ends: " + ", ".join(f"{n} {k}" for k, n in ends.items()))
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=None, help="seeds up to this one, excluded (10000)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--kl", action="store_true", help="the KL/face/tree/family half (tests/fuzz_kl_cases.py)")
    ap.add_argument("--first", type=int, default=None, help="first seed (--kl only; 0)")
    ap.add_argument("--seeds", default=None, metavar="S,S,... | @FILE",
                    help="run (or rerun) exactly these seeds, their rows in --out replaced (keyed by seed)")
    ap.add_argument("--budget", type=float, default=300.0, help="CPU seconds per case before it counts as a "
                    "timeout (--kl only)")
    ap.add_argument("--recheck-unconfirmed", action="store_true", help="rerun the rows of --out whose end is "
                    "unchecked or late, or that timed out, with the end check's budgets times --recheck-budget")
    ap.add_argument("--recheck-budget", type=float, default=10.0, help="the factor of --recheck-unconfirmed (10)")
    args = ap.parse_args(argv)
    if not (args.recheck_budget >= 1.0 and args.recheck_budget < float("inf")):
        ap.error(f"--recheck-budget must be a finite factor >= 1 (the first pass's budget is 1), got "
                 f"{args.recheck_budget:g}")
    seeds = None
    if args.recheck_unconfirmed and (args.seeds is not None or args.cases is not None or args.first is not None):
        ap.error("--recheck-unconfirmed reruns the unconfirmed rows of --out; it takes no --seeds, --cases or --first")
    if args.seeds is not None:
        if args.cases is not None or args.first is not None:
            ap.error(f"--seeds {args.seeds} runs exactly the seeds given; --cases and --first choose a range, "
                     "give one or the other")
        try:
            seeds = parse_seeds(args.seeds)
        except InvalidInputError as exc:
            ap.error(str(exc))
    cases = 10_000 if args.cases is None else args.cases
    first = 0 if args.first is None else args.first
    out = Path(args.out or ROOT / "runs" / "fuzz" / ("kl_fuzz.csv" if args.kl else "reliability_fuzz.csv"))
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.recheck_unconfirmed:
        factor = args.recheck_budget
        if args.kl:
            check = _with_cpu_budget(lambda seed: check_kl_case(seed, budget=factor), args.budget * factor)
        else:
            def check(seed):
                return check_case(seed, budget=factor)
        try:
            recheck_main(check, out, factor, "kl recheck" if args.kl else "recheck")
        except InvalidInputError as exc:
            ap.error(str(exc))
        return
    if seeds is not None:
        check = _with_cpu_budget(check_kl_case, args.budget) if args.kl else check_case
        seeds_main(check, seeds, out, "kl rerun" if args.kl else "rerun")
        return
    if args.kl:
        kl_main(cases, first, out, args.budget)
        return
    t0 = time.perf_counter()
    df = _run_seeds(check_case, range(cases), out, "fuzz")
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
