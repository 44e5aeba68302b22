"""How the assistant's rationale writes numbers and spans of days."""

from __future__ import annotations


def number(value: float | None) -> str:
    """Return a number as the rationale shows it: `2,000`, `7.1`, `0.43`, or `none`."""
    if value is None:
        return "none"
    if float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.1f}" if abs(value) >= 1 else f"{value:.2f}"


def days_text(value: float) -> str:
    """Return a span of days, rounded to whole days (at least one): `1 day`, `12 days`."""
    whole = max(1, round(value))
    return f"{whole} day" if whole == 1 else f"{whole} days"
