"""The price index: per-variant estimates, grade curves and repeat-sales indices.

Pure functions over plain dataclasses (no database); :mod:`rareindex.storage.pricing_store` reads
the sales and writes the results. One concept per module:

* :mod:`.sales` — :func:`priced_sales`: which stored sales enter the index (no lot, hidden price,
  rule flag or price anomaly; an auction at its price realised, buyer's premium included) and
  their USD amounts.
* :mod:`.estimates` — :func:`estimate_variant`: a time-decayed weighted median of log prices,
  projected along the category index, with a prediction interval and a confidence label.
* :mod:`.curves` — :func:`fit_grade_curve`: per category, the log offset of each grade fitted by
  median polish on assets sold in several grades; :func:`derive_estimates` borrows a value for a
  variant with no or thin sales from its asset's other grades.
* :mod:`.repeat_sales` — :func:`sale_pairs` and :func:`repeat_sales_index`: a weekly,
  chain-linked, Case-Shiller-weighted repeat-sales index with a median fallback for thin weeks.
* :mod:`.build` — :func:`build_pricing`: all of the above from one list of sales, deterministic.

Example:
    >>> result = build_pricing(sales, variants)                         # doctest: +SKIP
    >>> result.estimates["var_…"].value_usd                             # doctest: +SKIP
    >>> result.indices["category:sports"][-1].level                     # doctest: +SKIP
"""

from .build import PricingResult, VariantRef, build_pricing
from .curves import GradeCurve, GradeStep, derive_estimates, fit_grade_curve
from .estimates import Estimate, EstimateParams, estimate_variant
from .repeat_sales import IndexParams, IndexPoint, SalePair, repeat_sales_index, sale_pairs, week_of
from .sales import PricedSale, SaleRecord, priced_sales

__all__ = [
    "Estimate",
    "EstimateParams",
    "GradeCurve",
    "GradeStep",
    "IndexParams",
    "IndexPoint",
    "PricedSale",
    "PricingResult",
    "SalePair",
    "SaleRecord",
    "VariantRef",
    "build_pricing",
    "derive_estimates",
    "estimate_variant",
    "fit_grade_curve",
    "priced_sales",
    "repeat_sales_index",
    "sale_pairs",
    "week_of",
]
