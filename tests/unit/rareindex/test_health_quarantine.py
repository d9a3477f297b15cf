"""Health row 15: a connector whose share of quarantined observations jumps is DEGRADED
(``quarantine_jump``); a steady share, too few items or a small share are not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from rareindex.health import HealthInputs, QuarantineShare, RunRecord, assess

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def _inputs(share: QuarantineShare | None) -> HealthInputs:
    run = RunRecord(id="run_1", status="succeeded", records=80, finished_at=NOW - timedelta(1 / 24))
    return HealthInputs(
        "card-market", "active", "NORMAL", NOW, runs=(run,), last_success_at=run.finished_at,
        quarantine=share,
    )  # fmt: skip


def test_a_jump_in_the_quarantined_share_is_degraded() -> None:
    snap = assess(_inputs(QuarantineShare(40, 12, 400, 4)))  # 30 % now, 1 % before
    assert (snap.status, snap.reasons) == ("DEGRADED", ["quarantine_jump"])
    assert snap.details["quarantine"] == {
        "recent": 40,
        "recent_quarantined": 12,
        "recent_share": 0.3,
        "baseline": 400,
        "baseline_quarantined": 4,
        "baseline_share": 0.01,
    }


def test_a_first_batch_of_quarantines_without_history_is_a_jump() -> None:
    assert assess(_inputs(QuarantineShare(20, 6, 0, 0))).reasons == ["quarantine_jump"]


@pytest.mark.parametrize(
    "share",
    [
        None,  # not measured
        QuarantineShare(0, 0, 0, 0),  # nothing observed
        QuarantineShare(20, 4, 0, 0),  # 20 %, but only 4 items
        QuarantineShare(200, 10, 1000, 10),  # 5 %: below the 10 % floor
        QuarantineShare(40, 12, 400, 100),  # 30 % now, 25 % before: steady, not a jump
    ],
)
def test_no_jump_is_up(share: QuarantineShare | None) -> None:
    snap = assess(_inputs(share))
    assert (snap.status, snap.reasons) == ("UP", [])
