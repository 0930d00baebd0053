"""Integrations with training libraries. Nothing here is imported by ``import grpo_theory``."""
