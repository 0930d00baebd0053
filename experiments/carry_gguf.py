"""Split the 98 MB SmolLM2 GGUF file into halves that fit the device machine's 64 MiB per call.

    python experiments/carry_gguf.py split     # models/smollm2/part.0, part.1 and parts.sha256
    python experiments/carry_gguf.py join      # (on the device) rebuild the file and check its sha256

The device machine keeps ignored files between calls while it stays warm: carry
models/smollm2/part.0 with the first call and models/smollm2/part.1 (with parts.sha256) with the
second, then run experiments/gpu_validate.sh, which joins them. models/ is git-ignored, so nothing
large is ever committed, and the GPU script writes no model file under $OUT.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

DIR = Path(__file__).resolve().parents[1] / "models" / "smollm2"
NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def split(n: int = 2) -> None:
    data = (DIR / NAME).read_bytes()
    size = -(-len(data) // n)
    lines = [f"{_sha(data)}  {NAME}"]
    for i in range(n):
        part = data[i * size:(i + 1) * size]
        (DIR / f"part.{i}").write_bytes(part)
        lines.append(f"{_sha(part)}  part.{i}")
        print(f"part.{i}: {len(part) / 2**20:.1f} MiB")
    (DIR / "parts.sha256").write_text("\n".join(lines) + "\n")


def join() -> None:
    want = dict(reversed(line.split()) for line in (DIR / "parts.sha256").read_text().splitlines())
    parts = sorted(k for k in want if k.startswith("part."))
    missing = [p for p in parts if not (DIR / p).exists()]
    if missing:
        sys.exit(f"missing {missing} in {DIR}: carry each part in its own call while the machine is warm")
    data = b"".join((DIR / p).read_bytes() for p in parts)
    if _sha(data) != want[NAME]:
        sys.exit(f"the joined file's sha256 differs from {want[NAME]}: a part is damaged; carry it again")
    (DIR / NAME).write_bytes(data)
    print(f"{NAME}: {len(data) / 2**20:.1f} MiB, sha256 ok")


if __name__ == "__main__":
    {"split": split, "join": join}[sys.argv[1] if len(sys.argv) > 1 else "split"]()
