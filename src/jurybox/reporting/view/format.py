"""Number formatting: the one place jurybox rounds a number (DESIGN §2, reporting only formats).

Rules (stated verbatim in every report, see ``ROUNDING_NOTE``): proportions, agreement
coefficients, correlations and reliabilities to 3 decimals; scores, score differences and
standardised effect sizes to 2 decimals; p-values to 3 decimals with anything below 0.001 shown
as ``<0.001``; counts as integers. A missing value is an em dash, never 0.
"""

from __future__ import annotations

import math
from typing import Any

MISSING = "—"
ROUNDING_NOTE = (
    "Rounding: proportions, agreement coefficients, correlations and reliabilities to 3 "
    "decimals; scores, score differences and effect sizes to 2 decimals; p-values to 3 "
    "decimals, below 0.001 shown as <0.001; intervals are as the report states (95% unless "
    "noted). Numbers are rounded only here; analysis_report.json keeps full precision."
)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def fmt_num(value: Any, digits: int = 3) -> str:
    """A number to ``digits`` decimals; ints stay ints; None / NaN / non-numbers -> em dash."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if not _is_number(value) or math.isnan(value):
        return MISSING if value is None or _is_number(value) else str(value)
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    text = f"{value:.{digits}f}"
    return "0." + "0" * digits if text == "-0." + "0" * digits else text


def fmt_rate(value: Any) -> str:
    """A proportion or coefficient (3 decimals)."""
    return fmt_num(value, 3)


def fmt_percent(value: Any) -> str:
    """A share in words, as a whole percentage ("100%")."""
    if not _is_number(value) or math.isnan(value):
        return MISSING
    return f"{value:.0%}"


def fmt_score(value: Any) -> str:
    """A score, a difference of scores or an effect size (2 decimals)."""
    return fmt_num(value, 2)


def fmt_p(value: Any) -> str:
    """A p-value: 3 decimals, ``<0.001`` below 0.001."""
    if not _is_number(value) or math.isnan(value):
        return MISSING
    if value < 0.001:
        return "<0.001"
    return f"{value:.3f}"


def fmt_ci(low: Any, high: Any, digits: int = 3) -> str:
    """An interval as ``[low, high]``; em dash when either end is missing."""
    if not (_is_number(low) and _is_number(high)):
        return MISSING
    if math.isnan(low) or math.isnan(high):
        return MISSING
    return f"[{fmt_num(low, digits)}, {fmt_num(high, digits)}]"


def fmt_count(numerator: Any, denominator: Any) -> str:
    """``k/n`` for counts; em dash when either is missing."""
    if not (_is_number(numerator) and _is_number(denominator)):
        return MISSING
    return f"{int(numerator)}/{int(denominator)}"


#: A figure that rests on fewer items than this says so beside it (``few_items``).
FEW_ITEMS = 30


def few_items(items: Any) -> str:
    """`` (<30 items)`` for a figure resting on fewer than ``FEW_ITEMS`` items, else ``""``."""
    if _is_number(items) and not isinstance(items, bool) and items < FEW_ITEMS:
        return f" (<{FEW_ITEMS} items)"
    return ""


def fmt_value_ci(value: Any, low: Any, high: Any, digits: int = 3) -> str:
    """``value [low, high]``, or the value alone when the interval is missing."""
    text = fmt_num(value, digits)
    interval = fmt_ci(low, high, digits)
    return text if interval == MISSING else f"{text} {interval}"


def fmt_text(value: Any) -> str:
    """Free text for a table cell (names, methods); None -> em dash."""
    if value is None:
        return MISSING
    if isinstance(value, list | tuple):
        return ", ".join(fmt_text(v) for v in value) or MISSING
    if _is_number(value) or isinstance(value, bool):
        return fmt_num(value)
    return str(value)
