#!/usr/bin/env bash
# Theory against training on a CUDA device, as one prepared script (target: under 8 minutes).
#   OUT=runs/gpu bash experiments/gpu_validate.sh
# 1. the full small-GPT validation (grpo-theory validate) on the GPU;
# 2. SmolLM2-135M-Instruct yes/no validation, if its weights are in models/smollm2/.
# On the workplace's device machine nothing can be installed from a registry: its python3
# already has torch, transformers and accelerate; carry the gguf wheel in wheels/ and the
# GGUF file in models/smollm2/ (98 MB: two halves over two calls, joined with cat).
# CI never runs this.
# DEVICE=cpu SMOLLM_STEPS=2 runs the same script on a CPU (a dry run of everything but CUDA).
set -euo pipefail
OUT=${OUT:-runs/gpu}
DEVICE=${DEVICE:-cuda}
SMOLLM_STEPS=${SMOLLM_STEPS:-300}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python3}
if ls wheels/gguf-*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-deps --no-index wheels/gguf-*.whl
fi
if [ -f models/smollm2/part.aa ] && [ ! -f models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf ]; then
  cat models/smollm2/part.* > models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
fi
if [ "$DEVICE" = cuda ]; then
  $PY -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'; print(torch.cuda.get_device_name(0), torch.__version__)" \
    | tee "$OUT/device.txt"
fi
start=$(date +%s)
$PY -m grpo_theory.cli validate --device "$DEVICE" --out "$OUT/tiny" --no-progress 2>&1 | tee "$OUT/tiny.log"
if [ -f models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf ]; then
  $PY -m grpo_theory.cli validate-smollm2 --device "$DEVICE" --out "$OUT/smollm2" --steps "$SMOLLM_STEPS" --no-progress 2>&1 \
    | tee "$OUT/smollm2.log"
else
  echo "SmolLM2 weights not in models/smollm2/: skipped" | tee "$OUT/smollm2.log"
fi
echo "total $(( $(date +%s) - start )) s" | tee "$OUT/time.txt"
