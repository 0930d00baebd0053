#!/usr/bin/env bash
# The SmolLM2 study on one CUDA device, as one prepared script (target: under 8 minutes).
#   OUT=runs/gpu bash experiments/gpu_validate.sh
# Larger settings than the CPU study: the top 4 decoder layers train in full (attention included),
# 600 steps, 3 seeds. Tables (a few hundred kB) go to $OUT/results; checkpoints stay under runs/,
# never under $OUT.
# On the workplace's device machine nothing can be installed from a registry: its python3 has
# torch, transformers and accelerate; carry the gguf wheel in wheels/ and the GGUF file as two
# halves (python experiments/carry_gguf.py split; one half per call, models/ is git-ignored).
# CI never runs this. DEVICE=cpu STEPS=12 SEEDS=0 runs the same script on a CPU (a dry run).
set -euo pipefail
OUT=${OUT:-runs/gpu}
DEVICE=${DEVICE:-cuda}
STEPS=${STEPS:-600}
SEEDS=${SEEDS:-"0 1 2"}
TRAINABLE=${TRAINABLE:-top-4}
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
# shellcheck disable=SC2086
$PY experiments/smollm2_validate.py --device "$DEVICE" --trainable "$TRAINABLE" --steps "$STEPS" --seeds $SEEDS \
  --workers 1 --out runs/gpu_smollm2 --results "$OUT/results" 2>&1 | tee "$OUT/smollm2.log"
echo "total $(( $(date +%s) - start )) s" | tee "$OUT/time.txt"
