"""Agent memory layers (SPEC "Agent memory layers", seed 003): working, session, long-term.

Each layer is its own module; `receipt` holds what a per-user wipe reports per table.
"""
