"""robots.txt: our group or *, delays and rates per group, status conventions, the 500 KiB cut."""

from __future__ import annotations

from pathlib import Path

import pytest

from rareindex_connectors._robots_rules import (
    MAX_ROBOTS_BYTES,
    USER_AGENT,
    RequestRate,
    RobotsRules,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "adapters" / "robots"
SITE = "https://cards.example"


def _rules(name: str, **kwargs: str) -> RobotsRules:
    return RobotsRules.parse((FIXTURES / name).read_bytes(), **kwargs)


def test_our_group_applies_when_present() -> None:
    rules = _rules("groups.txt")

    assert rules.user_agent == USER_AGENT == "RareIndexBot"
    assert rules.can_fetch(f"{SITE}/cart") is True  # only * disallows it; our group does not
    assert rules.can_fetch(f"{SITE}/account/orders") is False
    assert rules.can_fetch(f"{SITE}/account/public/profile") is True
    assert rules.can_fetch(f"{SITE}/catalog/prices.pdf") is False
    assert rules.can_fetch(f"{SITE}/catalog/prices.pdf?page=2") is True  # `$` anchors the end
    assert rules.crawl_delay == 2.5
    assert rules.request_rate == RequestRate(requests=1, seconds=5)
    assert rules.request_rate.interval == 5.0


def test_star_group_applies_to_another_bot() -> None:
    rules = _rules("groups.txt", user_agent="PriceSpider/2.0")

    assert rules.user_agent == "PriceSpider"
    assert rules.can_fetch(f"{SITE}/cart/add") is False
    assert rules.can_fetch(f"{SITE}/products?sort=price") is False
    assert rules.can_fetch(f"{SITE}/search") is True
    assert rules.can_fetch(f"{SITE}/search/cards") is False
    assert rules.crawl_delay == 10.0
    assert rules.request_rate is None


def test_a_full_user_agent_header_is_cut_to_its_product_token() -> None:
    # Without our own group, "bot" in the contact URL must not select `User-agent: bot`.
    robots = "User-agent: *\nAllow: /\n\nUser-agent: bot\nDisallow: /\n"
    full = "RareIndexBot/1.0 (+https://rareindex.org/bot)"

    rules = RobotsRules.parse(robots, user_agent=full)

    assert rules.user_agent == "RareIndexBot"
    assert rules.can_fetch(f"{SITE}/products/1") is True
    assert _rules("groups.txt", user_agent=full).crawl_delay == 2.5


def test_groups_do_not_merge() -> None:
    # Our group exists but sets no Crawl-delay: the * group's 30 s does not leak into it.
    rules = _rules("group_without_delay.txt")

    assert rules.crawl_delay is None
    assert rules.can_fetch("https://x.example/drafts/1") is False


def test_star_only_file_gives_delay_and_rate_for_us() -> None:
    rules = _rules("star_only.txt")

    assert rules.can_fetch("https://coins.example/admin/") is False
    assert rules.can_fetch("https://coins.example/lots/1") is True
    assert rules.crawl_delay == 4.0
    assert rules.request_rate == RequestRate(requests=30, seconds=60)
    assert rules.request_rate.interval == 2.0


def test_sitemaps_are_listed_in_file_order() -> None:
    assert _rules("groups.txt").sitemaps == (
        "https://cards.example/sitemap.xml",
        "https://cards.example/sitemap_products_1.xml",
    )
    assert _rules("star_only.txt").sitemaps == ()


def test_bom_and_crlf_are_read() -> None:
    rules = _rules("bom_crlf.txt")

    assert rules.can_fetch("https://coins.example/about") is False
    assert rules.can_fetch("https://coins.example/lots/12") is True
    assert rules.truncated is False


def test_str_and_bytes_parse_alike() -> None:
    text = (FIXTURES / "groups.txt").read_text()

    assert RobotsRules.parse(text).can_fetch(f"{SITE}/account/x") is False
    assert RobotsRules.parse(text).crawl_delay == _rules("groups.txt").crawl_delay


def test_an_empty_file_allows_everything() -> None:
    rules = RobotsRules.parse(b"")

    assert rules.verdict == "parsed"
    assert rules.can_fetch(f"{SITE}/anything") is True
    assert rules.crawl_delay is None


def test_oversized_file_is_cut_at_a_line_boundary_within_500_kib() -> None:
    head = b"User-agent: *\nDisallow: /early\n"
    filler = b"# " + b"x" * 78 + b"\n"
    body = head + filler * ((MAX_ROBOTS_BYTES // len(filler)) + 5)
    late_rule = b"Disallow: /late\n"

    rules = RobotsRules.parse(body + late_rule)

    assert rules.truncated is True
    assert rules.can_fetch(f"{SITE}/early") is False
    assert rules.can_fetch(f"{SITE}/late") is True  # beyond the limit: never read
    assert RobotsRules.parse(head + late_rule).can_fetch(f"{SITE}/late") is False


@pytest.mark.parametrize(
    ("status", "verdict", "allowed"),
    [
        (200, "parsed", False),
        (301, "allow_all", True),
        (404, "allow_all", True),
        (410, "allow_all", True),
        (400, "allow_all", True),
        (401, "disallow_all", False),
        (403, "disallow_all", False),
        (429, "disallow_all", False),
        (500, "disallow_all", False),
        (503, "disallow_all", False),
        (103, "disallow_all", False),
    ],
)
def test_status_conventions(status: int, verdict: str, allowed: bool) -> None:
    rules = RobotsRules.from_status(status, b"User-agent: *\nDisallow: /\n")

    assert rules.verdict == verdict
    assert rules.can_fetch(f"{SITE}/products/1") is allowed


def test_unparsed_verdicts_have_no_delay_rate_or_sitemaps() -> None:
    for rules in (RobotsRules.allow_all(), RobotsRules.disallow_all()):
        assert (rules.crawl_delay, rules.request_rate, rules.sitemaps) == (None, None, ())


def test_a_status_that_is_not_http_is_refused() -> None:
    with pytest.raises(ValueError, match="HTTP status"):
        RobotsRules.from_status(0)


def test_rules_are_immutable() -> None:
    rules = RobotsRules.allow_all()

    with pytest.raises(AttributeError):
        rules.verdict = "disallow_all"  # type: ignore[misc]
