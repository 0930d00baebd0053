"""How often the earlier hostile audits and the contract sweeps name each public callable and each subcommand option
(the sixteenth audit started from the least named).

``python tests/hostile_audit_round16_coverage.py`` prints ``API <count> <module:qualname>`` for every callable of
``api_contract.public_callables()`` and ``CLI <count> <subcommand> <--option>`` for every option of every
``grpo-theory <cmd> --help``, counted (whole words) over ``tests/hostile_audit*.py``, ``tests/test_hostile*.py`` and
the contract sweeps, the sixteenth round's own files left out.
"""

from __future__ import annotations

import glob
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

COMMANDS = ("solve", "figures", "validate", "fetch-model", "sweep", "explain", "derivations", "predict")


def earlier_text() -> str:
    files = [f for f in glob.glob(str(HERE / "hostile_audit*.py")) + glob.glob(str(HERE / "test_hostile*.py"))
             if "round16" not in Path(f).name]
    files += [str(HERE / n) for n in ("api_contract.py", "test_api_contract.py", "test_cli_contract.py")]
    return "\n".join(Path(f).read_text(encoding="utf-8") for f in files)


def main() -> None:
    import api_contract

    text = earlier_text()
    rows = []
    for key in api_contract.public_callables():
        name = key.split(":")[1].split(".")[-1]
        rows.append((len(re.findall(r"\b" + re.escape(name) + r"\b", text)), key))
    for n, key in sorted(rows):
        print("API", n, key)
    for cmd in COMMANDS:
        helptext = subprocess.run([sys.executable, "-m", "grpo_theory.cli", cmd, "--help"], capture_output=True,
                                  text=True).stdout
        for opt in sorted(set(re.findall(r"(--[a-z][a-z0-9-]+)", helptext))):
            print("CLI", len(re.findall(re.escape(opt) + r"\b", text)), cmd, opt)


if __name__ == "__main__":
    main()
