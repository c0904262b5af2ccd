"""The paper's qualitative claims (Sections 10.1-10.4, appendix), each a check over the tables:
the framework (framework.py: views, comparison rules, `claim`, `evaluate`) and one module per
part of the paper, whose claims register in the paper's order when imported here."""

from campaign.report.claims import analysis, appendix, conclusions, individual, symmetric
from campaign.report.claims.conclusions import SYMMETRIC
from campaign.report.claims.framework import (
    BASE,
    CLAIMS,
    INCONCLUSIVE,
    MARGINS,
    SECTIONS,
    SYM_R,
    SYM_S,
    VERDICTS,
    Claim,
    NotMeasurable,
    Sample,
    Verdict,
    View,
    claim,
    views,
)
from campaign.report.claims.verdicts import (
    across_claims,
    contradictions,
    evaluate,
    one_reading,
)

__all__ = [
    "BASE",
    "CLAIMS",
    "INCONCLUSIVE",
    "MARGINS",
    "SECTIONS",
    "VERDICTS",
    "SYMMETRIC",
    "SYM_R",
    "SYM_S",
    "Claim",
    "NotMeasurable",
    "Sample",
    "Verdict",
    "View",
    "across_claims",
    "claim",
    "contradictions",
    "evaluate",
    "one_reading",
    "views",
]

PARTS = (symmetric, individual, analysis, appendix, conclusions)  # the paper's order
CLAIMS.sort(key=lambda item: [m.__name__ for m in PARTS].index(item.check.__module__))
