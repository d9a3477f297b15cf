"""The SDK's error tree. Every error a connector, an engine or the router raises is one of these.

```
ConnectorError
  PolicyError            bad domains.json / connector config: fail at load time, list valid values
  FetchError             .url .host .engine
    TransientFetchError  timeout, 5xx, 429 -> retry with backoff
      RateLimited        .retry_after
      DNSError           the name did not resolve (NXDOMAIN, no address, resolver timeout)
      TruncatedBody      body cut short: no end marker, or fewer bytes than Content-Length
      RobotsUnavailable  robots.txt 429/5xx/unreachable -> fetch nothing there, retry later
    PermanentFetchError  404/410, 401/403 -> no retry
      UnsafeURL          SSRF policy: private, loopback, link-local, metadata address refused
      ResponseTooLarge   body (after decompression) beyond max_response_bytes
      TLSError           certificate not valid for the host, untrusted, or handshake failed
      UndecodableBody    a Content-Encoding we cannot decode, or data that is not that encoding
      RobotsDisallowed   robots.txt disallows the URL for us: nothing was sent
    Blocked              challenge page -> next engine
    CircuitOpen          .reopens_at -> requeue later
    BudgetExhausted      -> wait, never send
  ParseError             .reason (closed vocabulary) .field .snippet
```

Lower-library errors (httpx, firecrawl-py, scrapfly-sdk) are translated into this tree at the engine
boundary; nothing above an engine catches ``httpx.*``.

Example:
    >>> try:
    ...     raise ParseError(ParseReason.UNKNOWN_CURRENCY, "not ISO-4217", field="price.currency")
    ... except ConnectorError as exc:
    ...     print(exc.reason, exc.field)
    unknown_currency price.currency

:func:`json_failure` says why a JSON body did not parse, in the same closed vocabulary: cut
short (``truncated``), wrongly encoded (``encoding_error``), nested deeper than :data:`MAX_DEPTH`
(``too_deep``; orjson's limit, measured without recursing), or garbage (``invalid_json``)::

    >>> json_failure(b'{"products": [{"id": 1')[0].value
    'truncated'
    >>> json_failure(b'{"title": "Pok\\xe9mon"}')[0].value
    'encoding_error'
    >>> json_failure(b"[" * 5000 + b"]" * 5000)[0].value
    'too_deep'
"""

from __future__ import annotations

import json
from datetime import datetime
from enum import StrEnum

__all__ = [
    "MAX_DEPTH",
    "Blocked",
    "BudgetExhausted",
    "CircuitOpen",
    "ConnectorError",
    "DNSError",
    "FetchError",
    "ParseError",
    "ParseReason",
    "PermanentFetchError",
    "PolicyError",
    "RateLimited",
    "ResponseTooLarge",
    "RobotsDisallowed",
    "RobotsUnavailable",
    "TLSError",
    "TransientFetchError",
    "TruncatedBody",
    "UndecodableBody",
    "UnsafeURL",
    "json_failure",
    "nesting_depth",
]

_SNIPPET_CHARS = 200


class ParseReason(StrEnum):
    """Why a payload or record failed to parse: a closed vocabulary, safe as a metric label."""

    INVALID_JSON = "invalid_json"
    ENCODING_ERROR = "encoding_error"
    TRUNCATED = "truncated"
    TOO_LARGE = "too_large"
    TOO_DEEP = "too_deep"
    EMPTY_PAYLOAD = "empty_payload"
    UNEXPECTED_SHAPE = "unexpected_shape"
    MISSING_FIELD = "missing_field"
    UNEXPECTED_FIELD = "unexpected_field"
    INVALID_TYPE = "invalid_type"
    INVALID_VALUE = "invalid_value"
    FLOAT_MONEY = "float_money"
    AMOUNT_PRECISION = "amount_precision"
    UNKNOWN_CURRENCY = "unknown_currency"
    CURRENCY_MISMATCH = "currency_mismatch"
    NAIVE_DATETIME = "naive_datetime"
    UNKNOWN_KIND = "unknown_kind"


class ConnectorError(Exception):
    """Root of every error the SDK raises."""


class PolicyError(ConnectorError):
    """Invalid domain policy or connector configuration, raised at load time.

    The message names the file and key, and lists the valid values where there is a closed set.
    """


class FetchError(ConnectorError):
    """A fetch failed. Carries where and through which engine, and the credits a paid engine
    charged for it anyway (Firecrawl bills a scrape whose target answered 403).

    ``indeterminate`` is True when the request was sent and no answer came back (a read timeout,
    a dropped connection): the vendor may well have done and billed the work, so the outcome is
    unknown and the fetch must not be resent blindly — a resend can be a second charge.
    """

    credits: float = 0.0
    indeterminate: bool = False

    def __init__(
        self, message: str, *, url: str, host: str | None = None, engine: str | None = None
    ):
        super().__init__(message)
        self.url = url
        self.host = host
        self.engine = engine


class TransientFetchError(FetchError):
    """Timeout, connection error, 408, 5xx: worth retrying with backoff."""


class RateLimited(TransientFetchError):
    """The host said 429. ``retry_after`` is the wait it asked for, in seconds, if any."""

    def __init__(
        self,
        message: str,
        *,
        url: str,
        host: str | None = None,
        engine: str | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(message, url=url, host=host, engine=engine)
        self.retry_after = retry_after


class PermanentFetchError(FetchError):
    """404/410, 401/403 without a challenge: retrying will not help."""

    def __init__(
        self,
        message: str,
        *,
        url: str,
        host: str | None = None,
        engine: str | None = None,
        status: int | None = None,
    ):
        super().__init__(message, url=url, host=host, engine=engine)
        self.status = status


class UnsafeURL(PermanentFetchError):
    """The SSRF policy refused the URL (or a redirect hop): it resolves to a private, loopback,
    link-local, multicast, reserved or cloud-metadata address and the host is not allow-listed."""


class RobotsDisallowed(PermanentFetchError):
    """The host's robots.txt disallows the URL for our user agent: nothing was sent to it."""


class RobotsUnavailable(TransientFetchError):
    """The host's robots.txt answered 429/5xx or did not answer: nothing is fetched from the host
    until it can be read (RFC 9309 "unreachable"), so the run is retried later."""


class ResponseTooLarge(PermanentFetchError):
    """The body, after decompression, exceeded the policy's ``max_response_bytes``."""


class DNSError(TransientFetchError):
    """The host name did not resolve: no such name, no address, or the resolver did not answer in
    time. Transient (DNS outages pass), unlike a name that resolves to a refused address
    (:class:`UnsafeURL`)."""


class TLSError(PermanentFetchError):
    """The TLS handshake failed: the certificate is not valid for the host name, is self-signed,
    expired or untrusted, or the server does not speak TLS. Retrying cannot fix a certificate."""


class TruncatedBody(TransientFetchError):
    """The body ended early: a gzip/deflate/br/zstd stream without its end marker, or fewer bytes
    than ``Content-Length``. Retried once, then reported."""


class UndecodableBody(PermanentFetchError):
    """The body's ``Content-Encoding`` is one we cannot decode (``compress``, an unknown name), or
    the bytes are not valid data of that encoding. The same request gets the same bytes."""


class Blocked(FetchError):
    """A challenge page (Cloudflare, Akamai, PerimeterX, DataDome, AWS WAF): try the next engine."""

    def __init__(
        self,
        message: str,
        *,
        url: str,
        host: str | None = None,
        engine: str | None = None,
        vendor: str | None = None,
    ):
        super().__init__(message, url=url, host=host, engine=engine)
        self.vendor = vendor


class CircuitOpen(FetchError):
    """The host's circuit breaker is open: fail fast, requeue after ``reopens_at``."""

    def __init__(
        self,
        message: str,
        *,
        url: str,
        host: str | None = None,
        engine: str | None = None,
        reopens_at: datetime | None = None,
    ):
        super().__init__(message, url=url, host=host, engine=engine)
        self.reopens_at = reopens_at


class BudgetExhausted(FetchError):
    """The host's (or a paid engine's) request budget is spent. Nothing was sent."""


class ParseError(ConnectorError):
    """A payload or record does not fit the schema. Fails closed: the raw record is kept.

    Attributes:
        reason: a :class:`ParseReason` (closed vocabulary).
        field: dotted path of the offending field, when one is to blame (``"price.currency"``).
        snippet: at most 200 characters of the offending input, for the operator.
    """

    def __init__(
        self,
        reason: ParseReason | str,
        message: str,
        *,
        field: str | None = None,
        snippet: str | None = None,
    ):
        self.reason = ParseReason(reason)
        self.field = field
        self.snippet = snippet[:_SNIPPET_CHARS] if snippet is not None else None
        where = f" at {field}" if field else ""
        super().__init__(f"{self.reason.value}{where}: {message}")


# Why a JSON body did not parse. Called only after a parse failed (the fast path stays
# orjson's), so a 5,000-deep page is classified, not a crash.

MAX_DEPTH = 1024
"""How deep arrays and objects may nest: orjson refuses more, and the standard decoder recurses."""


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` in ``text``, strings skipped; iterative, so any
    depth is measured without recursing.

    >>> nesting_depth('{"a": [1, {"b": "[[["}]}')
    3
    """
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def json_failure(content: bytes | str) -> tuple[ParseReason, str]:
    """The reason ``content`` is not JSON, and the decoder's message (with its position)."""
    if isinstance(content, bytes):
        try:
            content = content.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
        except UnicodeDecodeError as exc:
            return ParseReason.ENCODING_ERROR, f"not UTF-8: {exc}"
    if not content.strip():
        return ParseReason.EMPTY_PAYLOAD, "empty body"
    deepest = nesting_depth(content)
    if deepest > MAX_DEPTH:
        return ParseReason.TOO_DEEP, f"nested {deepest} levels deep (at most {MAX_DEPTH})"
    try:
        json.loads(content)
    except json.JSONDecodeError as exc:
        # Cut off, not mangled: the decoder ran out of input (an unterminated string always does).
        at_end = exc.pos >= len(content.rstrip()) or exc.msg.startswith("Unterminated string")
        return (ParseReason.TRUNCATED if at_end else ParseReason.INVALID_JSON), str(exc)
    except ValueError as exc:  # numbers beyond what the decoder takes, and the like
        return ParseReason.INVALID_JSON, str(exc)
    except RecursionError:  # within orjson's limit, past the interpreter's
        return ParseReason.TOO_DEEP, f"nested {deepest} levels deep: too deep to decode"
    return ParseReason.INVALID_JSON, "the fast parser refused what the standard one reads"
