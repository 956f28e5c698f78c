"""The statistics of ``hermes ab show``: written out here, no numeric library needed.

- ``wilson``: the Wilson score interval of a pass rate (95 % by default);
- ``mcnemar_exact``: McNemar's exact test on paired pass/fail (two arms, same cells);
- ``mann_whitney``: the Mann–Whitney U test on latencies or costs (exact distribution
  for small samples without ties, else the normal approximation with tie and
  continuity corrections — what ``scipy.stats.mannwhitneyu`` does with ``method="auto"``);
- ``quantile``: linear interpolation between order statistics (numpy's default).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

Z95 = 1.959963984540054
EXACT_LIMIT = 8
"""Both samples smaller than this and no ties: the exact U distribution is used."""


def wilson(passes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for ``passes`` out of ``n`` (``(0, 1)`` when n is 0)."""
    if n == 0:
        return 0.0, 1.0
    p = passes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # At 0 or n passes the bound is exactly 0 or 1 (rounding would leave 0.9999…).
    low = 0.0 if passes == 0 else max(0.0, centre - half)
    return low, 1.0 if passes == n else min(1.0, centre + half)


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Two-sided p of McNemar's exact test: ``only_first`` pairs passed in the first arm
    only, ``only_second`` in the second only (concordant pairs carry no information)."""
    n = only_first + only_second
    if n == 0:
        return 1.0
    k = min(only_first, only_second)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


@dataclass(frozen=True)
class UTest:
    u: float
    """U of the first sample (pairs where it is the larger; ties count half)."""
    p: float
    method: str
    """``exact`` or ``asymptotic``."""


def mann_whitney(first: Sequence[float], second: Sequence[float]) -> UTest:
    """Two-sided Mann–Whitney U test of ``first`` against ``second``."""
    n1, n2 = len(first), len(second)
    if n1 == 0 or n2 == 0:
        return UTest(0.0, 1.0, "none")
    ranks = _ranks([*first, *second])
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    ties = _tie_sizes([*first, *second])
    if max(n1, n2) < EXACT_LIMIT and not ties:
        big = max(u1, n1 * n2 - u1)
        p = 2 * sum(_u_count(n1, n2, u) for u in range(int(big), n1 * n2 + 1)) \
            / math.comb(n1 + n2, n1)
        return UTest(u1, min(1.0, p), "exact")
    n = n1 + n2
    mean = n1 * n2 / 2
    tie_term = sum(t ** 3 - t for t in ties) / (n * (n - 1))
    sd = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term))
    if sd == 0:
        return UTest(u1, 1.0, "asymptotic")
    z = (max(u1, n1 * n2 - u1) - mean - 0.5) / sd
    return UTest(u1, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2))), "asymptotic")


def _ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _tie_sizes(values: Sequence[float]) -> list[int]:
    counts: dict[float, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return [c for c in counts.values() if c > 1]


@lru_cache(maxsize=4096)
def _u_count(n1: int, n2: int, u: int) -> int:
    """How many arrangements of n1 + n2 distinct values give U = u to the first sample."""
    if u < 0 or u > n1 * n2:
        return 0
    if n1 == 0 or n2 == 0:
        return 1 if u == 0 else 0
    # The largest value belongs to the first sample (it beats all n2) or the second.
    return _u_count(n1 - 1, n2, u - n2) + _u_count(n1, n2 - 1, u)


def quantile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile by linear interpolation (numpy's default); None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
