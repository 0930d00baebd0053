"""Free generation on SmolLM2 (issue 23, see :mod:`grpo_theory.studies.free`): predict a real run per prompt.

Writes docs/results/free_generation.csv (seed, beta, prompt, p_ref, p_ref_n, predicted, measured,
measured_n, step, then the baselines and the convergence columns) and free_generation_summary.csv
(the MAEs per beta, seed and step); Figure 25 (`grpo-theory figures --only 25`) draws them. Every
stage is kept under --out: a rerun (after a crash, or with --stop-after in a later session) resumes.

    python experiments/smollm2_free_generation.py --workers 2 --more 1200 # the full study, 1,600 samples a measurement
    python experiments/smollm2_free_generation.py --pool greetings --prompts 8 --p-range 0.45 0.95 \
        --betas 0.5 4 --workers 2 --more 1200                             # the upper end of P(correct): writes
                                                                          # free_generation_greetings*.csv
    python experiments/smollm2_free_generation.py --pilot                 # CPU seconds per sample and per step,
                                                                          # and the full study's estimated cost
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def pilot(model_dir: str, n_prompts: int, n_samples: int, steps: int, spec: dict) -> dict:
    """Measure CPU seconds per sampled completion and per (training step, prompt) on a few pool prompts."""
    import torch

    from grpo_theory.studies import free, free_backend

    torch.set_num_threads(1)
    c0 = time.process_time()
    model, tok = free_backend.smol_model(model_dir)
    load = time.process_time() - c0
    pool = free.candidate_pool()
    chosen = [pool[i] for i in np.linspace(0, len(pool) - 1, n_prompts).astype(int)]
    c0 = time.process_time()
    backend = free_backend.SmolBackend(model, tok, [c[1] for c in chosen], spec.get("max_new_tokens", 4))
    prefill = (time.process_time() - c0) / n_prompts
    gen = torch.Generator().manual_seed(0)
    c0 = time.process_time()
    k = free.count_correct(backend, [c[2] for c in chosen], n_samples, gen)
    per_sample = (time.process_time() - c0) / (n_prompts * n_samples)
    job = free.JobSpec(beta=1.0, seed=0, group_size=spec.get("group_size", 8))
    opt = torch.optim.Adam(list(backend.parameters()), lr=job.learning_rate)
    want = [free.normalise(c[2]) for c in chosen]
    free._grpo_step(backend, opt, job, [c[2] for c in chosen], want, gen)       # warm-up (Adam's state, caches)
    c0 = time.process_time()
    for _ in range(steps):
        free._grpo_step(backend, opt, job, [c[2] for c in chosen], want, gen)
    per_step_prompt = (time.process_time() - c0) / (steps * n_prompts)
    return dict(load_cpu_s=round(load, 2), prefill_cpu_s_per_prompt=round(prefill, 3),
                cpu_s_per_sample=round(per_sample, 4), cpu_s_per_step_per_prompt=round(per_step_prompt, 4),
                group_size=job.group_size, pilot_prompts=n_prompts, pilot_samples=n_samples, pilot_steps=steps,
                pilot_correct=k.tolist(), threads=torch.get_num_threads())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--betas", type=float, nargs=2, default=None, help="default: chosen from the fresh p_ref")
    ap.add_argument("--prompts", type=int, default=24)
    ap.add_argument("--screen", type=int, default=32, help="screening samples per candidate")
    ap.add_argument("--n-ref", type=int, default=400)
    ap.add_argument("--max-steps", type=int, default=800)
    ap.add_argument("--min-steps", type=int, default=150)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--device", default="cpu", help="cuda: untested (no GPU was at hand when it was written)")
    ap.add_argument("--stop-after", type=int, default=None, help="training steps per job in this call")
    ap.add_argument("--more", type=int, default=0, metavar="N",
                    help="after training: N further samples per prompt for p_ref and for each final measurement, "
                         "pooled with the first (grpo_theory.studies.free_more)")
    ap.add_argument("--pool", choices=["main", "greetings"], default="main",
                    help="the candidates screened: yes/no, factual and arithmetic questions, or greetings and "
                         "counting requests (the upper end of P(correct)); results get a _greetings suffix")
    ap.add_argument("--p-range", type=float, nargs=2, default=None, metavar=("LO", "HI"),
                    help="the P(correct) range the kept prompts spread over (default 0.05 0.9)")
    ap.add_argument("--model-dir", default=str(ROOT / "models" / "smollm2"))
    ap.add_argument("--out", default=None, help="default: runs/free_generation, with _greetings for that pool")
    ap.add_argument("--results", default=str(ROOT / "docs" / "results"))
    ap.add_argument("--pilot", action="store_true", help="measure the unit costs and estimate the full study's")
    ap.add_argument("--pilot-prompts", type=int, default=4)
    ap.add_argument("--pilot-samples", type=int, default=64)
    ap.add_argument("--pilot-steps", type=int, default=3)
    args = ap.parse_args()
    spec = dict(max_steps=args.max_steps, min_steps=args.min_steps)
    if args.pilot:
        from grpo_theory.studies.free import cost_model

        unit = pilot(args.model_dir, args.pilot_prompts, args.pilot_samples, args.pilot_steps, {})
        jobs = 2 * len(args.seeds)
        est = {f"steps={s}": cost_model(cpu_per_sample=unit["cpu_s_per_sample"],
                                        cpu_per_step_per_prompt=unit["cpu_s_per_step_per_prompt"],
                                        n_screen=args.screen, n_prompts=args.prompts, n_ref=args.n_ref, jobs=jobs,
                                        steps=s) for s in (args.min_steps, 400, args.max_steps)}
        print(json.dumps(dict(unit=unit, cpu_seconds=est), indent=1))
        return
    from grpo_theory.studies.free import P_RANGE, run_free_study

    tag = "" if args.pool == "main" else f"_{args.pool}"
    out = args.out or str(ROOT / "runs" / f"free_generation{tag}")
    table, summary = run_free_study(out, model_dir=args.model_dir, seeds=tuple(args.seeds), betas=args.betas,
                                    n_prompts=args.prompts, n_screen=args.screen, n_ref=args.n_ref, spec=spec,
                                    workers=args.workers, stop_after=args.stop_after, device=args.device,
                                    n_more=args.more, pool=args.pool, p_range=tuple(args.p_range or P_RANGE))
    if table.empty:
        print(f"unfinished jobs remain under {out}: run the same command again to continue")
        return
    res = Path(args.results)
    table.to_csv(res / f"free_generation{tag}.csv", index=False, float_format="%.6g")
    summary.to_csv(res / f"free_generation{tag}_summary.csv", index=False, float_format="%.6g")
    # the training reward over each job's last 25% of steps: the time average beside the final snapshot
    from grpo_theory.studies.free_scoring import tail_rewards

    hist = {(b, s): pd.read_csv(Path(out) / f"beta{b:g}_seed{s}" / "history.csv")
            for (b, s), _ in table.groupby(["beta", "seed"])}
    tails = [tail_rewards(h).assign(seed=s, beta=b) for (b, s), h in hist.items()]
    # every step's training rewards (the fraction of G = 8 correct per prompt), for the tests and readers
    pd.concat([h.assign(seed=s, beta=b) for (b, s), h in hist.items()], ignore_index=True).pipe(
        lambda d: d[["seed", "beta"] + [c for c in d.columns if c not in ("seed", "beta")]]).to_csv(
        res / f"free_generation{tag}_history.csv", index=False, float_format="%.6g")
    pd.concat(tails, ignore_index=True)[["seed", "beta", "prompt", "tail_correct", "tail_n", "tail_mean",
                                          "tail_from_step"]].to_csv(res / f"free_generation{tag}_tail.csv",
                                                                    index=False, float_format="%.6g")
    # the figure is the paper's Figure 25: grpo-theory figures --only 25 (it reads these tables)
    print(summary[summary.kind == "final"].to_string(index=False))


if __name__ == "__main__":
    main()
