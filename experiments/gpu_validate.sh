#!/usr/bin/env bash
# The SmolLM2 study on one CUDA device, as one prepared script (target: under 8 minutes).
#   OUT=runs/gpu bash experiments/gpu_validate.sh
# Larger settings than the CPU study: the top 4 decoder layers train in full (attention included),
# Adam 3e-4 for 400 steps, 3 seeds, one pass; a 420 s budget keeps the call inside 8 minutes (not
# yet measured on a GPU). Tables (a few hundred kB) go to $OUT/results; checkpoints stay under
# runs/, never under $OUT.
# On the workplace's device machine nothing can be installed from a registry: its python3 has
# torch, transformers and accelerate; carry the gguf wheel in wheels/ and the GGUF file as two
# halves (python experiments/carry_gguf.py split; one half per call, models/ is git-ignored).
# CI never runs this. DEVICE=cpu STEPS=12 SEEDS=0 TRAINABLE=top-1 runs the same script on a CPU (a dry run).
set -euo pipefail
OUT=${OUT:-runs/gpu}
DEVICE=${DEVICE:-cuda}
STEPS=${STEPS:-400}
LR=${LR:-3e-4}
SEEDS=${SEEDS:-"0 1 2"}
TRAINABLE=${TRAINABLE:-top-4}
BUDGET_S=${BUDGET_S:-420}     # stop here, keeping every finished run, so the call ends inside 8 minutes
mkdir -p "$OUT/results"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
if ls wheels/gguf-*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-deps --no-index --target /tmp/site wheels/gguf-*.whl && export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi
if [ ! -f models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf ]; then
  $PY experiments/carry_gguf.py join
fi
if [ "$DEVICE" = cuda ]; then
  $PY -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'; print(torch.cuda.get_device_name(0), torch.__version__)" \
    | tee "$OUT/device.txt"
fi
start=$(date +%s)
# one pass at the step size that is safe for both penalties (the CPU study's finding), all configurations
# shellcheck disable=SC2086
timeout "$BUDGET_S" $PY experiments/smollm2_validate.py --device "$DEVICE" --trainable "$TRAINABLE" --steps "$STEPS" \
  --lr "$LR" --seeds $SEEDS --workers 1 --out runs/gpu_smollm2 --results "$OUT/results" 2>&1 \
  | tee "$OUT/smollm2.log" || echo "stopped at the ${BUDGET_S} s budget: the finished runs are kept" | tee -a "$OUT/smollm2.log"
# the finished runs' rows and summary, whether or not the budget cut the study short
$PY -c "
import glob, sys, pandas as pd
from grpo_theory.studies.smollm2 import summarise
rows = pd.concat([pd.read_csv(f) for f in sorted(glob.glob('runs/gpu_smollm2/rows/*.csv'))], ignore_index=True)
rows.to_csv(sys.argv[1] + '/smollm2_validate_gpu.csv', index=False)
summarise(rows).to_csv(sys.argv[1] + '/smollm2_validate_gpu_summary.csv', index=False)
print(summarise(rows).to_string(index=False))
" "$OUT/results" | tee -a "$OUT/smollm2.log"
echo "total $(( $(date +%s) - start )) s" | tee "$OUT/time.txt"
