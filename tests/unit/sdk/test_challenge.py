"""Challenge-page detection: recorded vendor pages, known false positives, engine inner statuses."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from rareindex_connectors._challenge import (
    BODY_SCAN_LIMIT,
    VENDOR_SIGNATURES,
    BodyMarker,
    ChallengeVerdict,
    VendorSignature,
    challenge_from_firecrawl,
    challenge_from_scrapfly,
    is_challenge_page,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "challenges"
CASES: list[dict[str, Any]] = json.loads((FIXTURES / "cases.json").read_text())["cases"]


def _headers(case: dict[str, Any]) -> list[tuple[str, str]]:
    return [(name, value) for name, value in json.loads((FIXTURES / case["headers"]).read_text())]


def _body(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _case(name: str) -> dict[str, Any]:
    return next(c for c in CASES if c["name"] == name)


def _summary(v: ChallengeVerdict) -> dict[str, Any]:
    return {
        "blocked": v.blocked,
        "protected": v.protected,
        "vendor": v.vendor,
        "kind": v.kind,
        "reasons": list(v.reasons),
    }


# -- the recorded cases ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_recorded_case(case: dict[str, Any]) -> None:
    verdict = is_challenge_page(case["status"], _headers(case), _body(case["body"]))

    assert _summary(verdict) == case["expected"], case["description"]
    assert bool(verdict) is case["expected"]["blocked"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_recorded_case_same_verdict_for_httpx_headers_and_str_body(case: dict[str, Any]) -> None:
    pairs, body = _headers(case), _body(case["body"])
    as_pairs = is_challenge_page(case["status"], pairs, body)

    assert is_challenge_page(case["status"], httpx.Headers(pairs), body) == as_pairs
    assert is_challenge_page(case["status"], pairs, body.decode("utf-8")) == as_pairs


def test_cases_cover_every_vendor_and_every_fixture_file() -> None:
    blocked_vendors = {c["expected"]["vendor"] for c in CASES if c["expected"]["blocked"]}
    referenced = {c["headers"] for c in CASES} | {c["body"] for c in CASES} | {"cases.json"}
    on_disk = {p.name for p in FIXTURES.iterdir()}

    assert blocked_vendors == {s.vendor for s in VENDOR_SIGNATURES}
    assert on_disk == referenced
    assert all(not c["expected"]["blocked"] for c in CASES if c["name"].startswith("fp_"))


# -- rules ----------------------------------------------------------------------------------------

CF_BODY = (
    b"<html><head><title>Just a moment...</title></head><script>window._cf_chl_opt={}</script>"
)


@pytest.mark.parametrize("status", [401, 403, 429, 503])
def test_body_marker_blocks_with_a_block_status(status: int) -> None:
    verdict = is_challenge_page(status, {}, CF_BODY)

    assert verdict.blocked
    assert verdict.vendor == "cloudflare"
    assert f"status:{status}" in verdict.reasons


@pytest.mark.parametrize("status", [200, 202, 404, 500])
def test_body_marker_without_a_block_status_is_protected_only(status: int) -> None:
    verdict = is_challenge_page(status, {}, CF_BODY)

    assert not verdict.blocked
    assert verdict.protected
    assert verdict.vendor == "cloudflare"
    assert verdict.kind is None


def test_aws_waf_blocks_only_on_its_own_statuses() -> None:
    body = _body("aws_waf_challenge_202.html")

    assert is_challenge_page(202, {}, body).blocked
    assert is_challenge_page(405, {}, body).blocked
    assert not is_challenge_page(403, {}, body).blocked
    assert is_challenge_page(403, {}, body).protected


def test_decisive_header_wins_outright_even_on_200() -> None:
    cf = is_challenge_page(200, {"cf-mitigated": "challenge"}, b"")
    aws = is_challenge_page(200, {"x-amzn-waf-action": "captcha"}, b"")

    assert (cf.blocked, cf.vendor, cf.kind, cf.reasons) == (
        True,
        "cloudflare",
        "challenge",
        ("header:cf-mitigated",),
    )
    assert (aws.blocked, aws.vendor, aws.kind) == (True, "aws_waf", "captcha")


def test_body_marker_of_another_vendor_names_that_vendor() -> None:
    # Cloudflare in front, DataDome behind it: the wall is DataDome's.
    headers = {"server": "cloudflare", "cf-ray": "8f2c1a9e4b7d3c26-IAD"}
    verdict = is_challenge_page(403, headers, _body("datadome_captcha_403.html"))

    assert (verdict.blocked, verdict.vendor, verdict.kind) == (True, "datadome", "captcha")


def test_equal_evidence_names_the_vendor_listed_first() -> None:
    headers = {"server": "cloudflare", "set-cookie": "datadome=x; Path=/"}
    reordered = sorted(VENDOR_SIGNATURES, key=lambda s: s.vendor != "datadome")

    assert is_challenge_page(200, headers, b"").vendor == "cloudflare"
    assert is_challenge_page(200, headers, b"", signatures=reordered).vendor == "datadome"


def test_server_datadome_is_corroborated_by_a_body_marker_without_a_block_status() -> None:
    body = b"<script>var dd={'rt':'i','cid':'x','host':'geo.captcha-delivery.com'}</script>"
    with_header = is_challenge_page(200, {"Server": "DataDome"}, body)
    without = is_challenge_page(200, {}, body)

    assert (with_header.blocked, with_header.kind) == (True, "js_challenge")
    assert "status:200" not in with_header.reasons
    assert (without.blocked, without.protected) == (False, True)


def test_datadome_banned_ip_is_a_block() -> None:
    body = (
        b"<script>var dd={'rt':'c','cid':'x','t':'bv','host':'geo.captcha-delivery.com'}</script>"
    )

    assert is_challenge_page(403, {}, body).kind == "block"


def test_cloudflare_jsd_script_alone_is_not_a_challenge_but_orchestrate_is() -> None:
    jsd = b"<script>a.src='/cdn-cgi/challenge-platform/scripts/jsd/main.js'</script>"
    orchestrate = b"<script>cpo.src='/cdn-cgi/challenge-platform/h/b/orchestrate/jsch/v1'</script>"

    assert not is_challenge_page(403, {}, jsd).blocked
    assert is_challenge_page(403, {}, orchestrate).blocked


# -- headers --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"CF-Mitigated": "challenge"},
        {"CF-MITIGATED": "Challenge"},
        {"cf-mitigated": " CHALLENGE "},
        httpx.Headers({"Cf-Mitigated": "challenge"}),
        [("cF-mItIgAtEd", "challenge")],
        [(b"CF-Mitigated", b"challenge")],
    ],
    ids=["title", "upper", "padded-value", "httpx", "pairs", "bytes-pairs"],
)
def test_header_names_and_values_match_case_insensitively(headers: Any) -> None:
    verdict = is_challenge_page(200, headers, b"")

    assert verdict.blocked
    assert verdict.reasons == ("header:cf-mitigated",)


@pytest.mark.parametrize(
    "headers",
    [
        httpx.Headers([("Set-Cookie", "a=1; Path=/"), ("Set-Cookie", "__cf_bm=x; Path=/")]),
        [("set-cookie", "a=1; Path=/"), ("SET-COOKIE", "__cf_bm=x; Path=/")],
        {"Set-Cookie": "a=1; Path=/, __cf_bm=x; Path=/"},  # a joined header, as dict(httpx.Headers)
    ],
    ids=["httpx-multi", "pairs", "joined"],
)
def test_a_repeated_set_cookie_is_not_lost(headers: Any) -> None:
    verdict = is_challenge_page(200, headers, b"")

    assert verdict.protected
    assert verdict.reasons == ("cookie:__cf_bm",)


def test_a_cookie_name_must_match_whole() -> None:
    verdict = is_challenge_page(200, {"Set-Cookie": "my__cf_bm=x; Path=/; xdatadome=1"}, b"")

    assert not verdict.protected


# -- the body bound -------------------------------------------------------------------------------

MARKER = b"<title>Just a moment...</title>"


@pytest.mark.parametrize("as_text", [False, True], ids=["bytes", "str"])
def test_only_the_first_body_scan_limit_is_scanned(as_text: bool) -> None:
    inside = b"x" * (BODY_SCAN_LIMIT - len(MARKER)) + MARKER
    outside = b"x" * (BODY_SCAN_LIMIT - len(MARKER) + 1) + MARKER

    def check(body: bytes) -> bool:
        return is_challenge_page(403, {}, body.decode() if as_text else body).blocked

    assert check(inside)
    assert not check(outside)


def test_a_ten_megabyte_body_with_a_late_marker_is_not_blocked() -> None:
    body = MARKER.replace(b"Just", b"Jest") + b" " * (10 * 1024 * 1024) + MARKER

    assert not is_challenge_page(403, {}, body).blocked
    assert is_challenge_page(403, {}, memoryview(MARKER + body)).blocked


def test_undecodable_bytes_and_a_split_character_do_not_raise() -> None:
    # Latin-1 bytes, then a 3-byte UTF-8 character cut by the scan limit.
    body = b"\xff\xfe caf\xe9 " + MARKER
    body += b"x" * (BODY_SCAN_LIMIT - len(body) - 1) + "€".encode()

    assert is_challenge_page(403, {}, body).blocked
    assert not is_challenge_page(403, {}, None).protected


# -- paid engines: the inner status ---------------------------------------------------------------

MANAGED_HTML = _body("cloudflare_managed_403.html").decode()


@pytest.mark.parametrize("key", ["statusCode", "status_code"])
def test_firecrawl_block_arrives_as_success_with_inner_403(key: str) -> None:
    verdict = challenge_from_firecrawl(
        {key: 403, "sourceURL": "https://shop.example.com/"}, MANAGED_HTML
    )

    assert (verdict.blocked, verdict.vendor, verdict.kind) == (True, "cloudflare", "challenge")
    assert "status:403" in verdict.reasons


def test_firecrawl_inner_200_with_the_same_page_is_not_blocked() -> None:
    verdict = challenge_from_firecrawl({"statusCode": 200}, MANAGED_HTML)

    assert not verdict.blocked
    assert verdict.protected


def test_firecrawl_inner_403_without_markers_is_not_a_challenge() -> None:
    verdict = challenge_from_firecrawl({"statusCode": "403"}, _body("fp_nginx_forbidden_403.html"))

    assert verdict == ChallengeVerdict()


def test_firecrawl_without_a_status_fails_closed_on_body_markers() -> None:
    verdict = challenge_from_firecrawl({"title": "Just a moment..."}, MANAGED_HTML)

    assert verdict.blocked
    assert verdict.reasons[-1] == "status:unknown"


def test_scrapfly_asp_error_code_is_blocked_with_unknown_vendor() -> None:
    verdict = challenge_from_scrapfly("ERR::ASP::SHIELD_PROTECTION_FAILED")

    assert (verdict.blocked, verdict.protected, verdict.vendor) == (True, True, None)
    assert verdict.reasons == ("error:ERR::ASP::SHIELD_PROTECTION_FAILED",)


@pytest.mark.parametrize(
    "code", ["ERR::THROTTLE::MAX_REQUEST_RATE_EXCEEDED", "ERR::SCRAPE::BAD_UPSTREAM_RESPONSE", ""]
)
def test_scrapfly_other_error_codes_are_not_challenges(code: str) -> None:
    assert challenge_from_scrapfly(code) == ChallengeVerdict()


def test_scrapfly_result_with_inner_403_and_headers() -> None:
    case = _case("datadome_captcha_403")
    headers: dict[str, Any] = {}
    for name, value in _headers(case):  # Scrapfly lists a repeated header's values
        headers.setdefault(name.lower(), []).append(value)
    result = {
        "status_code": 403,
        "response_headers": headers,
        "content": _body(case["body"]).decode(),
        "success": True,
    }

    verdict = challenge_from_scrapfly(result)
    from_envelope = challenge_from_scrapfly({"config": {}, "context": {}, "result": result})

    assert _summary(verdict) == case["expected"]
    assert from_envelope == verdict


def test_scrapfly_result_with_asp_error_object_is_blocked() -> None:
    result = {"status_code": 422, "content": "", "error": {"code": "ERR::ASP::SHIELD_ERROR"}}

    assert challenge_from_scrapfly({"result": result}).reasons == ("error:ERR::ASP::SHIELD_ERROR",)


def test_scrapfly_ordinary_page_is_not_blocked() -> None:
    case = _case("fp_cloudflare_proxied_200")
    result = {"status_code": 200, "content": _body(case["body"]).decode(), "response_headers": {}}

    assert challenge_from_scrapfly(result) == ChallengeVerdict()


# -- the verdict and the signatures ---------------------------------------------------------------


def test_verdict_is_falsy_by_default_and_frozen() -> None:
    verdict = ChallengeVerdict()

    assert not verdict
    assert bool(ChallengeVerdict(blocked=True, protected=True))
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.blocked = True  # type: ignore[misc]


def test_a_vendor_is_one_signature_entry() -> None:
    extra = VendorSignature(
        vendor="akamai", challenge_markers=(BodyMarker("body:test-wall", ("test-wall",)),)
    )
    body = b"<div class='test-wall'></div>"

    assert not is_challenge_page(403, {}, body).blocked
    assert is_challenge_page(403, {}, body, signatures=(*VENDOR_SIGNATURES, extra)).reasons == (
        "body:test-wall",
        "status:403",
    )


def test_signature_rejects_unknown_vendor_and_uppercase_needles() -> None:
    with pytest.raises(ValueError, match=r"unknown vendor 'imperva'; valid:.*cloudflare"):
        VendorSignature(vendor="imperva")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must be lowercase"):
        VendorSignature(vendor="akamai", scripts=(BodyMarker("body:x", ("BMak",)),))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_blocked_only_fast_path_agrees_on_blocked(case: dict[str, Any]) -> None:
    full = is_challenge_page(case["status"], _headers(case), _body(case["body"]))
    fast = is_challenge_page(case["status"], _headers(case), _body(case["body"]), blocked_only=True)
    assert fast.blocked == full.blocked
    if fast.blocked:
        assert fast == full


def test_blocked_only_skips_the_body_of_an_ordinary_200() -> None:
    body = b"<title>Just a moment...</title>_cf_chl_opt" * 10
    assert is_challenge_page(200, {}, body).protected
    assert is_challenge_page(200, {}, body, blocked_only=True) == ChallengeVerdict()
