"""``python -m grpo_theory``: the ``grpo-theory`` command."""

from .cli import main

raise SystemExit(main())
