"""Bearer tokens for the admin API: created once, stored hashed, checked on every request.

A token reads ``rit_<16 hex>_<43 url-safe chars>``: the hex part is the token's id (``tok_<hex>``,
shown by ``tokens list`` and safe to log), the rest is 256 random bits. Only the SHA-256 of the
whole token is stored; an unsalted fast hash is enough because the secret is random, not a
password. :func:`authenticate` finds the row by id and compares hashes in constant time, and reads
the database on every call, so a revoked token is refused on the very next request.

Example:
    >>> issued = create_token(engine, "grafana", role="read")      # doctest: +SKIP
    >>> authenticate(engine, issued.token).name                   # doctest: +SKIP
    'grafana'
    >>> revoke_token(engine, "grafana")                           # doctest: +SKIP
    >>> authenticate(engine, issued.token) is None                # doctest: +SKIP
    True
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, or_, select, update
from sqlalchemy.exc import IntegrityError

from ..errors import RareIndexError
from .schema.access import API_TOKEN_ROLES, api_tokens

__all__ = [
    "API_TOKEN_ROLES",
    "IssuedToken",
    "TokenError",
    "TokenInfo",
    "authenticate",
    "create_token",
    "hash_token",
    "list_tokens",
    "revoke_token",
]

_TOKEN = re.compile(r"^rit_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$")
_TOUCH_EVERY = timedelta(seconds=60)
"""``last_used_at`` is written at most once a minute per token: a busy monitor costs no writes."""


class TokenError(RareIndexError):
    """A token command that cannot be done (duplicate name, unknown or revoked token)."""


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """A stored token, without its secret."""

    id: str
    name: str
    role: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """A new token: ``token`` is the only copy there will ever be."""

    info: TokenInfo
    token: str


def hash_token(token: str) -> str:
    """The stored form of ``token``: its SHA-256, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def _info(row: Any) -> TokenInfo:
    return TokenInfo(row.id, row.name, row.role, row.created_at, row.last_used_at, row.revoked_at)


def create_token(engine: Engine, name: str, *, role: str = "admin") -> IssuedToken:
    """Mint a token named ``name``; :class:`TokenError` when a live token already has the name."""
    name = name.strip()
    if not name:
        raise TokenError("a token needs a name, e.g. `rareindex tokens create grafana`")
    if role not in API_TOKEN_ROLES:
        raise TokenError(f"unknown role {role!r}; valid roles: {', '.join(API_TOKEN_ROLES)}")
    hex_id = secrets.token_hex(8)
    token = f"rit_{hex_id}_{secrets.token_urlsafe(32)}"
    info = TokenInfo(f"tok_{hex_id}", name, role, datetime.now(UTC), None, None)
    try:
        with engine.begin() as conn:
            conn.execute(
                api_tokens.insert().values(
                    id=info.id,
                    name=name,
                    token_hash=hash_token(token),
                    role=role,
                    created_at=info.created_at,
                )
            )
    except IntegrityError:
        raise TokenError(
            f"a live token is already named {name!r}; revoke it first "
            f"(`rareindex tokens revoke {name}`) or pick another name"
        ) from None
    return IssuedToken(info, token)


def list_tokens(engine: Engine, *, include_revoked: bool = True) -> list[TokenInfo]:
    """Every token (oldest first), without secrets."""
    query = select(api_tokens).order_by(api_tokens.c.created_at, api_tokens.c.id)
    if not include_revoked:
        query = query.where(api_tokens.c.revoked_at.is_(None))
    with engine.connect() as conn:
        return [_info(row) for row in conn.execute(query)]


def revoke_token(engine: Engine, id_or_name: str) -> TokenInfo:
    """Revoke the live token with this id (``tok_…``) or else this name; refused from now on."""
    now = datetime.now(UTC)
    with engine.begin() as conn:
        for column in (api_tokens.c.id, api_tokens.c.name):  # an id wins over a look-alike name
            row = conn.execute(
                update(api_tokens)
                .where(column == id_or_name, api_tokens.c.revoked_at.is_(None))
                .values(revoked_at=now)
                .returning(*api_tokens.c)
            ).first()
            if row is not None:
                return _info(row)
        known = conn.execute(
            select(api_tokens.c.id).where(
                or_(api_tokens.c.id == id_or_name, api_tokens.c.name == id_or_name)
            )
        ).first()
    if known is not None:
        raise TokenError(f"token {id_or_name!r} is already revoked")
    raise TokenError(f"no token {id_or_name!r}; `rareindex tokens list` shows ids and names")


def authenticate(engine: Engine, token: str) -> TokenInfo | None:
    """The live token ``token`` is, or None (malformed, unknown, wrong secret or revoked)."""
    match = _TOKEN.match(token)
    if match is None:
        return None
    token_id = f"tok_{match.group(1)}"
    now = datetime.now(UTC)
    with engine.begin() as conn:
        row = conn.execute(select(api_tokens).where(api_tokens.c.id == token_id)).first()
        if row is None or not hmac.compare_digest(row.token_hash, hash_token(token)):
            return None
        if row.revoked_at is not None:
            return None
        conn.execute(
            update(api_tokens)
            .where(
                api_tokens.c.id == token_id,
                or_(
                    api_tokens.c.last_used_at.is_(None),
                    api_tokens.c.last_used_at < now - _TOUCH_EVERY,
                ),
            )
            .values(last_used_at=now)
        )
    return _info(row)
