"""``certificates`` and ``certificate_sightings``: the provenance graph, idempotent by natural key.

A certificate is keyed by ``(grader, cert_number)`` (the number without its dash, as graders'
lookups match it) and gets ``stable_id("crt", grader, number)``; a sighting by ``(source_id,
listing_external_id, cert_number, title_hash)`` and ``stable_id("sig", …)``. So recording the same
listing twice, or verifying a certificate again, rewrites the same rows. Rows come back as plain
dicts; the service turns them into views.

Example:
    >>> ids = add_pending(conn, [("PSA", "12345678")])              # doctest: +SKIP
    >>> new = add_sightings(conn, [sighting_row])                   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, bindparam, select, update
from sqlalchemy.dialects import postgresql, sqlite

from .ids import stable_id
from .schema import (
    certificate_sightings,
    certificates,
    connectors,
    normalized_records,
    raw_records,
    sources,
)
from .upsert import upsert

__all__ = [
    "VERIFICATION_COLUMNS",
    "add_pending",
    "add_sightings",
    "certificate_id",
    "ensure_source",
    "find_certificates",
    "find_sightings",
    "link_attributed",
    "listing_records",
    "listing_titles",
    "pending_certificates",
    "save_certificates",
    "set_mismatches",
    "sighting_id",
]

VERIFICATION_COLUMNS = (
    "status", "grade", "qualifier", "label_type", "subject", "year", "set_name", "details",
    "verified_at",
)  # fmt: skip
"""What a verification writes (and a later one overwrites) on a certificate."""
_CHUNK = 500


def certificate_id(grader: str, number: str) -> str:
    return stable_id("crt", grader, number)


def sighting_id(source_id: str, listing_external_id: str, number: str, title_hash: str) -> str:
    return stable_id("sig", source_id, listing_external_id, number, title_hash)


def ensure_source(conn: Connection, source_id: str, name: str) -> None:
    """A ``sources`` row for ``source_id`` (sightings reference it); an existing one is kept."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(sources).values(id=source_id, name=name)
    conn.execute(statement.on_conflict_do_nothing(index_elements=["id"]))


def add_pending(conn: Connection, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Certificates ``(grader, number)`` as ``pending`` unless they exist; their ids."""
    ids = {key: certificate_id(*key) for key in dict.fromkeys(keys)}
    rows = [
        {"id": i, "grader": g, "cert_number": n, "status": "pending"} for (g, n), i in ids.items()
    ]
    upsert(conn, certificates, rows, conflict=["grader", "cert_number"])
    return ids


def save_certificates(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Upsert verification results: ``grader``, ``cert_number`` and :data:`VERIFICATION_COLUMNS`."""
    full = [
        {"id": certificate_id(r["grader"], r["cert_number"]), "grader": r["grader"]}
        | {"cert_number": r["cert_number"]}
        | {c: r.get(c) for c in VERIFICATION_COLUMNS}
        for r in rows
    ]
    upsert(
        conn, certificates, full, conflict=["grader", "cert_number"], update=VERIFICATION_COLUMNS
    )


def add_sightings(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> int:
    """Insert sightings (id from the natural key); returns how many were new."""
    full = []
    for row in rows:
        key = (row["source_id"], row["listing_external_id"], row["cert_number"], row["title_hash"])
        full.append({**row, "id": sighting_id(*key)})
    unique = list({r["id"]: r for r in full}.values())
    existing: set[str] = set()
    for start in range(0, len(unique), _CHUNK):
        chunk = [r["id"] for r in unique[start : start + _CHUNK]]
        query = select(certificate_sightings.c.id).where(certificate_sightings.c.id.in_(chunk))
        existing.update(conn.execute(query).scalars())
    upsert(
        conn,
        certificate_sightings,
        unique,
        conflict=["source_id", "listing_external_id", "cert_number", "title_hash"],
    )
    return len(unique) - len(existing)


def set_mismatches(conn: Connection, changes: Mapping[str, str | None]) -> None:
    """Sighting id -> the mismatch signal (None clears it)."""
    if not changes:
        return
    statement = (
        update(certificate_sightings)
        .where(certificate_sightings.c.id == bindparam("sid"))
        .values(mismatch=bindparam("value"))
    )
    conn.execute(statement, [{"sid": k, "value": v} for k, v in changes.items()])


def link_attributed(conn: Connection) -> int:
    """Attributed sightings without a certificate get their (pending) one; returns how many."""
    query = select(
        certificate_sightings.c.id,
        certificate_sightings.c.grader,
        certificate_sightings.c.cert_number,
    ).where(
        and_(
            certificate_sightings.c.attribution == "attributed",
            certificate_sightings.c.grader.is_not(None),
            certificate_sightings.c.certificate_id.is_(None),
        )
    )
    loose = list(conn.execute(query))
    if not loose:
        return 0
    ids = add_pending(conn, [(g, n) for _, g, n in loose])
    statement = (
        update(certificate_sightings)
        .where(certificate_sightings.c.id == bindparam("sid"))
        .values(certificate_id=bindparam("cid"))
    )
    conn.execute(statement, [{"sid": s, "cid": ids[g, n]} for s, g, n in loose])
    return len(loose)


def pending_certificates(conn: Connection, *, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` certificates still ``pending``, oldest first."""
    query = (
        select(certificates)
        .where(certificates.c.status == "pending")
        .order_by(certificates.c.created_at, certificates.c.id)
        .limit(limit)
    )
    return [dict(r._mapping) for r in conn.execute(query)]


def find_certificates(
    conn: Connection,
    *,
    number: str | None = None,
    grader: str | None = None,
    ids: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Certificates with ``number`` (of ``grader``, or of every grader) and/or by id, by grader."""
    query = select(certificates).order_by(certificates.c.grader, certificates.c.cert_number)
    if number is not None:
        query = query.where(certificates.c.cert_number == number)
    if grader is not None:
        query = query.where(certificates.c.grader == grader)
    if ids is not None:
        query = query.where(certificates.c.id.in_(list(ids)))
    return [dict(r._mapping) for r in conn.execute(query)]


def find_sightings(
    conn: Connection,
    *,
    certificate_ids: Sequence[str] | None = None,
    number: str | None = None,
    ids: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Sightings of some certificates, of a number (any attribution) or by id; oldest first."""
    query = select(certificate_sightings).order_by(
        certificate_sightings.c.seen_at, certificate_sightings.c.id
    )
    if certificate_ids is not None:
        query = query.where(certificate_sightings.c.certificate_id.in_(list(certificate_ids)))
    if number is not None:
        query = query.where(certificate_sightings.c.cert_number == number)
    if ids is not None:
        query = query.where(certificate_sightings.c.id.in_(list(ids)))
    return [dict(r._mapping) for r in conn.execute(query)]


def listing_records(
    conn: Connection,
    *,
    kinds: Sequence[str],
    after: str | None = None,
    since: datetime | None = None,
    limit: int = 1000,
) -> list[dict[str, Any]]:
    """Normalized records of ``kinds`` in id order after ``after`` (normalized at or after
    ``since``), each with its connector's ``source_id`` and its raw record's ``fetched_at``."""
    query = (
        select(
            normalized_records.c.id,
            normalized_records.c.connector_id,
            normalized_records.c.record,
            connectors.c.source_id,
            raw_records.c.fetched_at,
        )
        .join(connectors, connectors.c.id == normalized_records.c.connector_id)
        .join(raw_records, raw_records.c.id == normalized_records.c.raw_id)
        .where(normalized_records.c.kind.in_(list(kinds)))
        .order_by(normalized_records.c.id)
        .limit(limit)
    )
    if after is not None:
        query = query.where(normalized_records.c.id > after)
    if since is not None:
        query = query.where(normalized_records.c.created_at >= since)
    return [dict(r._mapping) for r in conn.execute(query)]


def listing_titles(
    conn: Connection, keys: Iterable[tuple[str, str]], *, kinds: Sequence[str]
) -> dict[tuple[str, str], list[str]]:
    """``(source_id, external_id)`` -> the titles its stored normalized records carry."""
    wanted = set(keys)
    by_source: dict[str, list[str]] = {}
    for source_id, external_id in wanted:
        by_source.setdefault(source_id, []).append(external_id)
    external = normalized_records.c.record["external_id"].as_string()
    found: dict[tuple[str, str], list[str]] = {}
    for source_id, external_ids in by_source.items():
        for start in range(0, len(external_ids), _CHUNK):
            query = (
                select(normalized_records.c.record)
                .join(connectors, connectors.c.id == normalized_records.c.connector_id)
                .where(
                    connectors.c.source_id == source_id,
                    normalized_records.c.kind.in_(list(kinds)),
                    external.in_(external_ids[start : start + _CHUNK]),
                )
            )
            for (record,) in conn.execute(query):
                key = (source_id, str(record.get("external_id")))
                title = record.get("title")
                if key in wanted and isinstance(title, str):
                    found.setdefault(key, []).append(title)
    return found
