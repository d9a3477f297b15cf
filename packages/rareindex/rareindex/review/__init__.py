"""The review queue: observations whose price is beyond a change limit against their variant's
reference, or that an anomaly rule flags, are quarantined — stored, left out of the index and
marked in the multi-currency views — until a person accepts or rejects them.

* :mod:`.limits` — the pure rule: the reference (estimate, else the median of recent sales) and
  the per-category factor (3 by default: above 3x or below a third).
* :mod:`.quarantine` — :func:`quarantine_batch`, the resolve stage's step (set-based).
* :mod:`.decisions` — :func:`decide`: accept (into the index, with a ``review.accepted`` event)
  or reject (kept, marked), with who, when and why.

Stored by :mod:`rareindex.storage.review_store`; served by ``rareindex review list|accept|
reject|limit`` and ``GET /api/review``, ``POST /api/review/{id}/accept|reject``.
"""

from .decisions import Decision, decide
from .limits import DEFAULT_FACTOR, Reference, Verdict, judge, limit_for, median_reference
from .quarantine import QUARANTINED_KINDS, quarantine_batch, reference_for

__all__ = [
    "DEFAULT_FACTOR",
    "QUARANTINED_KINDS",
    "Decision",
    "Reference",
    "Verdict",
    "decide",
    "judge",
    "limit_for",
    "median_reference",
    "quarantine_batch",
    "reference_for",
]
