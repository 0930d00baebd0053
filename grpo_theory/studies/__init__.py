"""Studies: each module runs one comparison of the theory with a trainer and writes its tables.

``small`` (the small GPT's gated configurations), ``tree`` (token level on answer trees), ``kl``
(KL estimators, placements and clamps), ``smollm2`` (SmolLM2-135M on real prompts), ``free`` (free
generation on SmolLM2), ``trl`` (TRL's own GRPOTrainer); ``predictions`` is their one bridge to the solvers.
Run one with ``grpo-theory validate --study NAME`` or ``protocol.run_study(NAME, **settings)``
(``protocol.STUDIES`` is the table of them). Every study needs torch; importing this package
imports none of them.
"""
