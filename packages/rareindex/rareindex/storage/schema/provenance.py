"""Certificates and their sightings: the provenance graph.

A node is ``(grader, cert_number)``; an edge is a sighting on a source at a time. A sighting whose
grader could not be attributed (``NOT PSA``, a bare number) keeps ``grader`` NULL and an
``attribution`` saying why, and points at no certificate until one is verified.
"""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Index, Integer, Table, Text, UniqueConstraint

from ..types import ExactDecimal, JSONDoc, UTCDateTime
from ._base import created_at, id_column, metadata, updated_at

__all__ = ["certificate_sightings", "certificates"]

certificates = Table(
    "certificates",
    metadata,
    id_column(),
    Column("grader", Text, nullable=False),
    Column("cert_number", Text, nullable=False),
    Column("status", Text, nullable=False, server_default="pending"),
    Column("grade", Text),
    Column("qualifier", Text),
    Column("label_type", Text),
    Column("subject", Text),
    Column("year", Integer),
    Column("set_name", Text),
    Column("asset_id", Text, ForeignKey("assets.id")),
    Column("variant_id", Text, ForeignKey("asset_variants.id")),
    Column("details", JSONDoc),
    Column("verified_at", UTCDateTime()),
    created_at(),
    updated_at(),
    UniqueConstraint("grader", "cert_number"),
)

certificate_sightings = Table(
    "certificate_sightings",
    metadata,
    id_column(),
    Column("certificate_id", Text, ForeignKey("certificates.id")),
    Column("cert_number", Text, nullable=False),
    Column("grader", Text),
    Column("attribution", Text, nullable=False, comment="attributed, ambiguous, negated"),
    Column("source_id", Text, ForeignKey("sources.id"), nullable=False),
    Column("listing_external_id", Text, nullable=False),
    Column("url", Text),
    Column("seen_at", UTCDateTime(), nullable=False),
    Column("title_hash", Text, nullable=False),
    Column("image_hash", Text),
    Column("price", ExactDecimal()),
    Column("currency", Text),
    Column("mismatch", Text, comment="subject or year disagreeing with the verified certificate"),
    created_at(),
    UniqueConstraint("source_id", "listing_external_id", "cert_number", "title_hash"),
    Index(None, "cert_number"),
)
