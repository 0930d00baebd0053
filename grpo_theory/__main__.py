"""``python -m grpo_theory``: the ``grpo-theory`` command."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
