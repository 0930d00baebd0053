"""Run by tests/test_trl.py under ``accelerate launch --num_processes 2 --cpu``: a tiny TRL GRPO run with
the tracking callback. Arguments: MODEL_DIR OUT_DIR."""

import sys
import warnings

import trl
from datasets import Dataset
from transformers import AutoTokenizer

from grpo_theory.integrations.trl import Probe, make_tracking_callback


def reward(prompts, completions, correct, **kw):
    return [float(c.strip() == k) for c, k in zip(completions, correct)]


def main(model_dir: str, out_dir: str) -> None:
    tok = AutoTokenizer.from_pretrained(model_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = trl.GRPOConfig(output_dir=out_dir, use_cpu=True, bf16=False, report_to="none",
                              per_device_train_batch_size=4, num_generations=4, max_completion_length=1,
                              beta=0.5, max_steps=4, learning_rate=1e-3, save_strategy="no", disable_tqdm=True)
        probes = [Probe("Q0 ?", ("A", "B"), (1.0, 0.0)), Probe("Q1 ?", ("A", "B"), (0.0, 1.0))]
        cb = make_tracking_callback(probes, tok, args, every=2, figure=False)
        ds = Dataset.from_dict({"prompt": ["Q0 ?", "Q1 ?"] * 8, "correct": ["A", "B"] * 8})
        trainer = trl.GRPOTrainer(model=model_dir, reward_funcs=reward, args=args, train_dataset=ds,
                                  processing_class=tok, callbacks=[cb])
        trainer.train()
    acc = trainer.accelerator                     # a marker per process, so the test can count them
    open(f"{out_dir}/rank_{acc.process_index}_of_{acc.num_processes}", "w").close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
