"""Challenge-page detection: did an anti-bot vendor answer instead of the site?

A challenge page must never be stored as a good record (invariant 8 of docs/architecture.md); the
router counts it as ``blocked`` and escalates to the next engine. The rules
(docs/domain.md#challenge-pages):

1. A *decisive* header wins outright, whatever the status: Cloudflare sets ``cf-mitigated`` on every
   challenge page (``challenge`` is its only value); AWS WAF sets ``x-amzn-waf-action:
   challenge|captcha`` on its Challenge (202) and CAPTCHA (405) answers.
2. Otherwise the status must be one the vendor blocks with ({401, 403, 429, 503}; AWS WAF uses 202
   and 405) **and** the body must carry a challenge marker of the *same* vendor.
3. A *corroborated* header (``server: DataDome``) blocks only with a block status or a DataDome
   body marker: the header says DataDome answered, not that it refused.
4. Cookies, sensor scripts, ``server: cloudflare`` / ``cf-ray`` alone mean *protected*, not blocked.

Markers are data: one :class:`VendorSignature` per vendor in :data:`VENDOR_SIGNATURES`. Bodies are
scanned only up to :data:`BODY_SCAN_LIMIT`, so a 10 MB page costs what a 64 KiB one does.

Example:
    >>> body = b"<title>Just a moment...</title>"
    >>> v = is_challenge_page(403, {"CF-Mitigated": "challenge"}, body)
    >>> bool(v), v.vendor, v.kind, v.reasons
    (True, 'cloudflare', 'challenge', ('header:cf-mitigated', 'body:title:just-a-moment'))
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, get_args

__all__ = [
    "BODY_SCAN_LIMIT",
    "VENDOR_SIGNATURES",
    "BodyMarker",
    "ChallengeKind",
    "ChallengeVendor",
    "ChallengeVerdict",
    "HeaderMarker",
    "HeadersLike",
    "VendorSignature",
    "challenge_from_firecrawl",
    "challenge_from_scrapfly",
    "is_challenge_page",
]

ChallengeVendor = Literal["cloudflare", "akamai", "perimeterx", "datadome", "aws_waf"]
"""Anti-bot vendors we recognise: a closed vocabulary, safe as a metric label."""

ChallengeKind = Literal["block", "captcha", "challenge", "js_challenge"]
"""``block``: refused, no puzzle will help. ``captcha``: needs a human (or solver).
``challenge``: managed interstitial that may pass by itself. ``js_challenge``: silent JS proof."""

HeadersLike: TypeAlias = Mapping[str, str] | Iterable[tuple[str, str]]
"""A ``dict`` (any case), an ``httpx.Headers`` (repeated ``Set-Cookie`` kept) or ``(name, value)``
pairs."""

BODY_SCAN_LIMIT: Final = 64 * 1024
"""Bytes (or characters, for ``str`` bodies) of the body that are scanned. Challenge pages
are small and carry their markers near the top."""

BLOCK_STATUSES: Final = frozenset({401, 403, 429, 503})
_ASP_ERROR_PREFIX: Final = "ERR::ASP::"


@dataclass(frozen=True, slots=True)
class ChallengeVerdict:
    """What :func:`is_challenge_page` concluded. Truthy exactly when ``blocked``.

    Attributes:
        blocked: The response is a challenge or block page, not the site's content.
        protected: An anti-bot vendor fronts the site (always true when ``blocked``).
        vendor: The vendor that blocked, else the first (in signature order) seen protecting;
            ``None`` if none, or if a paid engine reported a block without naming the vendor.
        kind: What kind of wall it is (only when ``blocked``).
        reasons: Stable short evidence strings, e.g. ``header:cf-mitigated``, ``status:403``.
    """

    blocked: bool = False
    protected: bool = False
    vendor: ChallengeVendor | None = None
    kind: ChallengeKind | None = None
    reasons: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.blocked


@dataclass(frozen=True, slots=True)
class HeaderMarker:
    """A response header; matches when present and (if ``contains``) its value holds that text.

    ``kind`` matters only for decisive and corroborated headers.
    """

    name: str
    contains: str | None = None
    kind: ChallengeKind = "challenge"

    @property
    def reason(self) -> str:
        return f"header:{self.name}"


@dataclass(frozen=True, slots=True)
class BodyMarker:
    """Body evidence: matches when *all* ``needles`` occur in the (lowered) scanned body."""

    reason: str
    needles: tuple[str, ...]
    kind: ChallengeKind = "challenge"


@dataclass(frozen=True, slots=True)
class VendorSignature:
    """Everything that identifies one vendor. Order within each tuple matters only for ``kind``:
    the first matching challenge marker names it, so list ``block`` and ``captcha`` markers first.
    """

    vendor: ChallengeVendor
    decisive_headers: tuple[HeaderMarker, ...] = ()
    corroborated_headers: tuple[HeaderMarker, ...] = ()
    challenge_markers: tuple[BodyMarker, ...] = ()
    supporting_headers: tuple[HeaderMarker, ...] = ()
    cookies: tuple[str, ...] = ()
    scripts: tuple[BodyMarker, ...] = ()
    block_statuses: frozenset[int] = BLOCK_STATUSES

    def __post_init__(self) -> None:
        if self.vendor not in get_args(ChallengeVendor):
            raise ValueError(f"unknown vendor {self.vendor!r}; valid: {get_args(ChallengeVendor)}")
        # Headers and bodies are lowered before matching, so an upper-case needle never matches.
        texts = [h.name + (h.contains or "") for h in self._headers()]
        texts += [n for m in (*self.challenge_markers, *self.scripts) for n in m.needles]
        for text in texts:
            if text != text.lower():
                raise ValueError(f"{self.vendor}: marker text {text!r} must be lowercase")
        kinds = [h.kind for h in self._headers()] + [m.kind for m in self.challenge_markers]
        for kind in kinds:
            if kind not in get_args(ChallengeKind):
                raise ValueError(f"unknown kind {kind!r}; valid: {get_args(ChallengeKind)}")

    def _headers(self) -> tuple[HeaderMarker, ...]:
        return (*self.decisive_headers, *self.corroborated_headers, *self.supporting_headers)


def _body(reason: str, *needles: str, kind: ChallengeKind = "challenge") -> BodyMarker:
    return BodyMarker(f"body:{reason}", needles, kind)


# The rules: docs/domain.md#challenge-pages. Needles are lowercase; bodies are lowered before
# matching.
VENDOR_SIGNATURES: Final[tuple[VendorSignature, ...]] = (
    VendorSignature(
        vendor="cloudflare",
        decisive_headers=(HeaderMarker("cf-mitigated", "challenge"),),
        challenge_markers=(
            _body("title:attention-required", "attention required! | cloudflare", kind="block"),
            _body("cf-access-denied", "used cloudflare to restrict access", kind="block"),
            _body("cf-turnstile", "cf-turnstile", kind="captcha"),
            _body("turnstile", "challenges.cloudflare.com/turnstile", kind="captcha"),
            _body("cf-browser-verification", "cf-browser-verification", kind="js_challenge"),
            _body("jschl", "jschl", kind="js_challenge"),
            _body("title:just-a-moment", "<title>just a moment...</title>"),
            _body("_cf_chl_opt", "_cf_chl_opt"),
            _body("__cf_chl_", "__cf_chl_"),
            # Not the bare path: Cloudflare's JavaScript Detections inject
            # /cdn-cgi/challenge-platform/scripts/jsd/main.js into ordinary pages, 403s included.
            _body("challenge-platform:orchestrate", "/cdn-cgi/challenge-platform/", "orchestrate/"),
            _body("challenges.cloudflare.com", "challenges.cloudflare.com"),
        ),
        supporting_headers=(HeaderMarker("server", "cloudflare"), HeaderMarker("cf-ray")),
        cookies=("__cf_bm", "cf_clearance"),
        scripts=(_body("cdn-cgi-challenge-platform", "/cdn-cgi/challenge-platform/"),),
    ),
    VendorSignature(
        vendor="akamai",
        challenge_markers=(
            # The classic AkamaiGHost 403, entity-encoded ("Reference&#32;&#35;18.xxxx").
            _body("access-denied-reference", "access denied", "reference&#32;&#35;", kind="block"),
            _body("edgesuite", "errors&#46;edgesuite&#46;net", kind="block"),
            _body("edgesuite", "errors.edgesuite.net", kind="block"),
            # The same page after entity decoding (an engine's text or markdown output).
            _body(
                "access-denied-reference",
                "access denied",
                "you don't have permission to access",
                "reference #",
                kind="block",
            ),
            _body("sbsd", "/.well-known/sbsd"),
            _body("sbsd", "/_sec/sbsd"),
            _body("akam-pixel", "/akam/", "/pixel_"),
        ),
        supporting_headers=(HeaderMarker("server", "akamaighost"),),
        cookies=("_abck", "bm_sz", "ak_bmsc", "bm_sv", "sbsd"),
        scripts=(_body("bmak", "bmak."),),
    ),
    VendorSignature(
        vendor="perimeterx",
        challenge_markers=(
            _body("px-captcha", "px-captcha", kind="captcha"),
            _body("captcha.px-cdn", "captcha.px-cdn.", kind="captcha"),
            _body("px-captcha.js", "_pxappid", "/captcha/captcha.js", kind="captcha"),
            # Advanced Blocking Response, sent to clients that Accept: application/json.
            _body("px-json-block", '"blockscript"', '"appid"', kind="captcha"),
            _body("whywasiblocked", "perimeterx.com/whywasiblocked", kind="block"),
            _body(
                "automation-tools",
                "denied because we believe you are using automation tools",
                kind="block",
            ),
        ),
        cookies=("_px2", "_px3", "_pxhd", "_pxvid", "pxcts"),
        # window._pxAppId is also set by the ordinary sensor snippet on every protected page.
        scripts=(
            _body("_pxappid", "_pxappid"),
            _body("client.perimeterx.net", "client.perimeterx.net"),
            _body("client.px-cloud.net", "client.px-cloud.net"),
        ),
    ),
    VendorSignature(
        vendor="datadome",
        corroborated_headers=(HeaderMarker("server", "datadome", kind="block"),),
        challenge_markers=(
            _body("dd:banned", "var dd={", "'t':'bv'", kind="block"),  # IP banned: no captcha
            _body("dd:interstitial", "var dd={'rt':'i'", kind="js_challenge"),
            _body("dd:captcha", "var dd={'rt':", kind="captcha"),
            _body("captcha-delivery.com", "captcha-delivery.com", kind="captcha"),
        ),
        supporting_headers=(
            HeaderMarker("x-datadome"),
            HeaderMarker("x-datadome-cid"),
            HeaderMarker("x-dd-b"),
        ),
        cookies=("datadome",),
        scripts=(
            _body("js.datadome.co", "js.datadome.co/tags.js"),
            _body("ddjskey", "ddjskey"),
        ),
    ),
    VendorSignature(
        vendor="aws_waf",
        decisive_headers=(
            HeaderMarker("x-amzn-waf-action", "captcha", kind="captcha"),
            HeaderMarker("x-amzn-waf-action", "challenge", kind="js_challenge"),
        ),
        challenge_markers=(
            _body("awswaf-captcha", "captcha.awswaf.com", kind="captcha"),  # interstitial (405)
            _body("awswaf-captcha", "captcha-sdk.awswaf.com", kind="captcha"),  # CAPTCHA JS API
            _body("awswaf-challenge.js", "awswaf.com", "challenge.js", kind="js_challenge"),
            _body("awswaf", "awswaf", kind="js_challenge"),
        ),
        cookies=("aws-waf-token",),
        block_statuses=frozenset({202, 405}),
    ),
)


def is_challenge_page(
    status: int,
    headers: HeadersLike,
    body: bytes | bytearray | memoryview | str | None,
    *,
    signatures: Iterable[VendorSignature] = VENDOR_SIGNATURES,
    blocked_only: bool = False,
) -> ChallengeVerdict:
    """Tell an anti-bot challenge or block page from the site's own answer.

    Args:
        status: The upstream HTTP status (for a paid engine, the *inner* status; see
            :func:`challenge_from_firecrawl` and :func:`challenge_from_scrapfly`).
        headers: Response headers, matched case-insensitively.
        body: Response body; only the first :data:`BODY_SCAN_LIMIT` bytes are read, and bytes are
            decoded as UTF-8 leniently (bad bytes never raise).
        signatures: The vendors to look for; defaults to :data:`VENDOR_SIGNATURES`.
        blocked_only: Only ``blocked`` matters to the caller (the fetch hot path): when no
            vendor could block at this status and no decisive or corroborated header is present,
            return an empty verdict without scanning the body (``protected`` is then unknown).

    Returns:
        A :class:`ChallengeVerdict`, truthy when blocked. A plain 403 with no vendor marker is
        *not* a challenge: it is an ordinary ``PermanentFetchError``.

    Example:
        >>> v = is_challenge_page(503, {"Server": "cloudflare"},
        ...                       b"<form id='challenge-form' action='/?__cf_chl_jschl_tk__=x'>")
        >>> v.blocked, v.vendor, v.kind
        (True, 'cloudflare', 'js_challenge')
        >>> v = is_challenge_page(200, {"server": "cloudflare", "cf-ray": "8a1-IAD"}, "<h1>Hi</h1>")
        >>> bool(v), v.protected, v.reasons
        (False, True, ('header:server', 'header:cf-ray'))
    """
    if blocked_only and not _could_block(status, headers, signatures):
        return ChallengeVerdict()
    return _classify(status, headers, body, signatures)


def _could_block(status: int, headers: HeadersLike, signatures: Iterable[VendorSignature]) -> bool:
    signatures = tuple(signatures)
    if any(status in sig.block_statuses for sig in signatures):
        return True
    normalized = _normalize_headers(headers)
    return any(
        _header_matches(marker, normalized)
        for sig in signatures
        for marker in (*sig.decisive_headers, *sig.corroborated_headers)
    )


def challenge_from_firecrawl(
    document_metadata: Mapping[str, object], content: bytes | str | None
) -> ChallengeVerdict:
    """Classify a Firecrawl ``/v2/scrape`` document, which reports an upstream block as *success*.

    Firecrawl answers 200 with the target's status in ``metadata.statusCode`` (``status_code`` in
    firecrawl-py's snake_case models) and the challenge page in ``rawHtml``. Firecrawl passes no
    response headers, so only the status and body rules apply. A missing or malformed status fails
    closed: body markers alone then block.

    Args:
        document_metadata: ``data.metadata`` (or ``document.metadata.model_dump()``).
        content: Prefer ``rawHtml``; markdown has lost the script URLs most markers live in.

    Example:
        >>> challenge_from_firecrawl({"statusCode": 403}, "<div id='px-captcha'></div>").vendor
        'perimeterx'
    """
    status = document_metadata.get("statusCode", document_metadata.get("status_code"))
    return _classify(_as_status(status), (), content, VENDOR_SIGNATURES)


def challenge_from_scrapfly(result: Mapping[str, object] | str) -> ChallengeVerdict:
    """Classify a Scrapfly scrape: an ``ERR::ASP::*`` error code, or the upstream result.

    Args:
        result: Either an error code such as ``"ERR::ASP::SHIELD_PROTECTION_FAILED"``, or the
            response's ``result`` object (the whole ``{config, context, result}`` envelope is
            accepted too). Its ``error.code``, ``status_code``, ``response_headers`` and
            ``content`` are read. Any ``ERR::ASP::*`` code is blocked with ``vendor=None``: Scrapfly
            does not say whose shield it failed. Other error codes are not challenges.

    Example:
        >>> challenge_from_scrapfly("ERR::ASP::SHIELD_PROTECTION_FAILED").reasons
        ('error:ERR::ASP::SHIELD_PROTECTION_FAILED',)
        >>> challenge_from_scrapfly({"status_code": 200, "content": "<h1>ok</h1>"}).blocked
        False
    """
    if isinstance(result, str):
        return _from_scrapfly_error(result)
    inner = result.get("result")
    if isinstance(inner, Mapping):
        result = inner
    error = result.get("error")
    if isinstance(error, Mapping) and isinstance(error.get("code"), str):
        verdict = _from_scrapfly_error(str(error["code"]))
        if verdict.blocked:
            return verdict
    content = result.get("content")
    return _classify(
        _as_status(result.get("status_code")),
        result.get("response_headers") or (),
        content if isinstance(content, (str, bytes)) else None,
        VENDOR_SIGNATURES,
    )


def _from_scrapfly_error(code: str) -> ChallengeVerdict:
    code = code.strip()
    if not code.upper().startswith(_ASP_ERROR_PREFIX):
        return ChallengeVerdict()
    return ChallengeVerdict(
        blocked=True, protected=True, kind="challenge", reasons=(f"error:{code}",)
    )


def _as_status(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


# -- the evaluation -------------------------------------------------------------------------------

_NONE, _PROTECTED, _BLOCKED, _DECISIVE = range(4)


def _classify(
    status: int | None,
    headers: object,
    body: bytes | bytearray | memoryview | str | None,
    signatures: Iterable[VendorSignature],
) -> ChallengeVerdict:
    """``status=None`` means unknown: the status gate is treated as passed (fail closed)."""
    normalized = _normalize_headers(headers)
    text = _scan_prefix(body)
    best, best_strength = ChallengeVerdict(), _NONE
    for signature in signatures:
        verdict, strength = _evaluate(signature, status, normalized, text)
        if strength > best_strength:  # strict: on a tie the earlier vendor keeps the verdict
            best, best_strength = verdict, strength
    return best


def _evaluate(
    sig: VendorSignature, status: int | None, headers: dict[str, list[str]], text: str
) -> tuple[ChallengeVerdict, int]:
    decisive = [h for h in sig.decisive_headers if _header_matches(h, headers)]
    corroborated = [h for h in sig.corroborated_headers if _header_matches(h, headers)]
    supporting = [h for h in sig.supporting_headers if _header_matches(h, headers)]
    cookies = [c for c in sig.cookies if _sets_cookie(c, headers)]
    markers = [m for m in sig.challenge_markers if all(n in text for n in m.needles)]
    scripts = [m for m in sig.scripts if all(n in text for n in m.needles)]
    status_gate = status is None or status in sig.block_statuses

    if decisive:
        strength = _DECISIVE
    elif (corroborated and (status_gate or markers)) or (markers and status_gate):
        strength = _BLOCKED
    elif corroborated or supporting or cookies or markers or scripts:
        strength = _PROTECTED
    else:
        return ChallengeVerdict(), _NONE

    reasons = _unique(
        [h.reason for h in (*decisive, *corroborated, *supporting)]
        + [f"cookie:{c}" for c in cookies]
        + [m.reason for m in (*markers, *scripts)]
    )
    if strength == _PROTECTED:
        return ChallengeVerdict(protected=True, vendor=sig.vendor, reasons=reasons), strength
    if status_gate and strength == _BLOCKED:
        reasons += ("status:unknown" if status is None else f"status:{status}",)
    kind = (markers or decisive or corroborated)[0].kind
    verdict = ChallengeVerdict(
        blocked=True, protected=True, vendor=sig.vendor, kind=kind, reasons=reasons
    )
    return verdict, strength


def _header_matches(marker: HeaderMarker, headers: dict[str, list[str]]) -> bool:
    values = headers.get(marker.name)
    if not values:
        return False
    return marker.contains is None or any(marker.contains in v for v in values)


def _sets_cookie(name: str, headers: dict[str, list[str]]) -> bool:
    # A joined "a=1; Path=/, b=2" (httpx.Headers.items()) still splits on ", " / "; ".
    pattern = re.compile(rf"(?:^|[\s,;]){re.escape(name)}=")
    return any(pattern.search(v) for v in headers.get("set-cookie", ()))


def _normalize_headers(headers: object) -> dict[str, list[str]]:
    """Lower-cased name -> lower-cased values, keeping repeated headers (``Set-Cookie``)."""
    multi_items = getattr(headers, "multi_items", None)  # httpx.Headers without importing httpx
    if callable(multi_items):
        pairs: Iterable[object] = multi_items()
    elif isinstance(headers, Mapping):
        pairs = headers.items()
    elif isinstance(headers, Iterable) and not isinstance(headers, (str, bytes)):
        pairs = headers
    else:
        pairs = ()
    out: dict[str, list[str]] = {}
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            continue
        name, value = pair
        # Scrapfly may hand a repeated header over as a list of values.
        values = value if isinstance(value, (list, tuple)) else (value,)
        bucket = out.setdefault(_to_text(name).strip().lower(), [])
        bucket.extend(_to_text(v).lower() for v in values)
    return out


def _scan_prefix(body: bytes | bytearray | memoryview | str | None) -> str:
    if body is None:
        return ""
    if isinstance(body, str):
        return body[:BODY_SCAN_LIMIT].lower()
    # Slice before decoding: a 10 MB body costs one 64 KiB decode. A multi-byte character cut
    # at the boundary becomes U+FFFD instead of raising.
    return bytes(body[:BODY_SCAN_LIMIT]).decode("utf-8", errors="replace").lower()


def _to_text(value: object) -> str:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("latin-1")
    return str(value)


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
