"""Data quality for the normalizer: rules, price anomalies, field presence and schema drift.

Everything here is pure (no database): it flags, it never deletes (docs/domain.md#anomalies).

* :mod:`.rules` — rules before statistics: :func:`rule_flags` reads a record and its title for
  lots, reprints, customs, redemptions, sealed product, doubtful grades and hidden prices;
  :func:`excluded_from_index` says whether those flags keep it out of the price statistics.
* :mod:`.anomalies` — :func:`flag_price_anomalies`: robust outliers of one variant's prices on a
  log scale (modified z, Tukey fences when MAD is 0), each with a reason code.
* :mod:`.field_stats` — :func:`count_fields`: how many records of each kind carry each field;
  :mod:`rareindex.storage.field_stats` adds the counts to the daily ``connector_field_stats``.
* :mod:`.drift` — :func:`detect_drift`: fields whose presence today fell well below the past week's.

Usage, in the normalizer::

    from rareindex.quality import (
        count_fields, detect_drift, excluded_from_index, flag_price_anomalies, rule_flags,
    )
    from rareindex.storage.field_stats import add_field_stats, load_field_history

    flags = {rec.external_id: rule_flags(rec) for rec in records}
    indexable = [r for r in records if not excluded_from_index(flags[r.external_id])]
    outliers = flag_price_anomalies([(obs_id, price) for obs_id, price in variant_window])
    with engine.begin() as conn:
        add_field_stats(conn, connector_id, today, count_fields(newly_stored))
        history = load_field_history(conn, connector_id, today - timedelta(days=7))
    for signal in detect_drift(history, today):
        log.warning("schema.drifted", connector=connector_id, field=signal.field)
"""

from .anomalies import AnomalyFlag, AnomalyReason, flag_price_anomalies
from .drift import DriftSignal, FieldHistory, detect_drift
from .field_stats import FieldCounts, FieldPresence, count_fields, merge_counts
from .rules import EXCLUDING_FLAGS, QualityFlag, excluded_from_index, rule_flags

__all__ = [
    "EXCLUDING_FLAGS",
    "AnomalyFlag",
    "AnomalyReason",
    "DriftSignal",
    "FieldCounts",
    "FieldHistory",
    "FieldPresence",
    "QualityFlag",
    "count_fields",
    "detect_drift",
    "excluded_from_index",
    "flag_price_anomalies",
    "merge_counts",
    "rule_flags",
]
