"""Closed forms for the fraction of [0, 1]^n on which an operator's derivative is nonvanishing.

`*_paper` functions are the formulas as printed in the paper; `yager_exact` is the volume of
the positive orthant of the unit l_p ball, which we use to check the printed formulas.
"""

from __future__ import annotations

import math


def lukasiewicz_paper(n: int) -> float:
    """Prop. luk: the Lukasiewicz aggregator (and bounded sum) is nonvanishing on 1/n!."""
    return 1.0 / math.factorial(n)


def nilpotent_paper(n: int) -> float:
    """Prop. in Section 6.6 (appendix nilpfrac): the nilpotent aggregator, 1/2^(n-1)."""
    return 1.0 / 2 ** (n - 1)


def yager_aggregator_paper(n: int) -> float:
    """Prop. vol_yager as printed: pi^(n/2) / (2^n Gamma(n/2 + 1/2)) for p = 2."""
    return math.pi ** (n / 2) / (2**n * math.gamma(n / 2 + 0.5))


def yager_tnorm_paper(p: float) -> float:
    """Section 7.3 (Mathematica): sqrt(pi) 4^(-1/p) Gamma(1/p) / (p Gamma(1/2 + 1/p)), n = 2."""
    return math.sqrt(math.pi) * 4 ** (-1 / p) * math.gamma(1 / p) / (p * math.gamma(0.5 + 1 / p))


def yager_exact(n: int, p: float) -> float:
    """Volume of {z in [0,1]^n : sum z_i^p < 1} = Gamma(1 + 1/p)^n / Gamma(1 + n/p) (Dirichlet)."""
    return math.exp(n * math.lgamma(1 + 1 / p) - math.lgamma(1 + n / p))
