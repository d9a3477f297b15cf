"""robots.txt rules for our crawler, on protego (RFC 9309 matching, wildcards, Allow/Disallow).

Which group applies: the group naming our product token (``RareIndexBot``) if there is one, else
``*``. Groups never merge: if our group exists, its (lack of) ``Crawl-delay`` wins over ``*``'s.
A full User-Agent header passed as ``user_agent`` is cut to its product token first, so a group
named ``bot`` cannot match the ``/bot`` in our contact URL.

What to do when there is no usable robots.txt (:meth:`RobotsRules.from_status`):

====================  ===========  =====================================================
status                 rules        why
====================  ===========  =====================================================
2xx                    parsed       the file (empty file: allow all)
3xx                    allow all    redirects already exhausted by the fetcher: "unavailable"
404, 410, other 4xx    allow all    RFC 9309 §2.3.1.3 "unavailable"
401, 403               disallow     the long-standing convention (RFC 9309 would allow; we don't)
429, 5xx               disallow     RFC 9309 §2.3.1.4 "unreachable": assume complete disallow
1xx                    disallow     not a final answer
====================  ===========  =====================================================

A network error or timeout is "unreachable" too: use :meth:`RobotsRules.disallow_all` and retry
later. Files over 500 KiB are cut at the last complete line before 500 KiB (RFC 9309 §2.5 requires
parsing at least that much) and ``truncated`` is set.

Example:
    >>> rules = RobotsRules.parse("User-agent: *\\nDisallow: /cart\\nCrawl-delay: 2\\n")
    >>> rules.can_fetch("https://shop.example/cart/1"), rules.can_fetch("https://shop.example/p/1")
    (False, True)
    >>> rules.crawl_delay
    2.0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from protego import Protego

__all__ = ["MAX_ROBOTS_BYTES", "USER_AGENT", "RequestRate", "RobotsRules"]

USER_AGENT = "RareIndexBot"
"""Our product token, as robots.txt groups name it."""
MAX_ROBOTS_BYTES = 500 * 1024
"""How much of a robots.txt is parsed (RFC 9309 §2.5: at least 500 KiB)."""

Verdict = Literal["parsed", "allow_all", "disallow_all"]


@dataclass(frozen=True, slots=True)
class RequestRate:
    """``Request-rate: 1/5s``: at most ``requests`` per ``seconds``."""

    requests: int
    seconds: int

    @property
    def interval(self) -> float:
        """Seconds to leave between requests to honour the rate."""
        return self.seconds / self.requests


def _product_token(user_agent: str) -> str:
    token = user_agent.strip().split("/", 1)[0].split(None, 1)
    if not token:
        raise ValueError("user_agent is empty")
    return token[0]


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """The robots.txt rules that apply to one user agent on one host. Immutable.

    Build it with :meth:`parse`, :meth:`from_status`, :meth:`allow_all` or :meth:`disallow_all`.
    """

    user_agent: str
    verdict: Verdict
    truncated: bool = False
    parser: Protego | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "user_agent", _product_token(self.user_agent))

    @classmethod
    def parse(cls, text: str | bytes, *, user_agent: str = USER_AGENT) -> RobotsRules:
        """Rules from a robots.txt body (``bytes`` are read as UTF-8, bad bytes replaced)."""
        raw = text.encode("utf-8") if isinstance(text, str) else text
        truncated = len(raw) > MAX_ROBOTS_BYTES
        if truncated:
            cut = raw.rfind(b"\n", 0, MAX_ROBOTS_BYTES)
            raw = raw[: cut + 1 if cut >= 0 else MAX_ROBOTS_BYTES]
        body = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
        return cls(
            user_agent=user_agent,
            verdict="parsed",
            parser=Protego.parse(body),
            truncated=truncated,
        )

    @classmethod
    def allow_all(cls, *, user_agent: str = USER_AGENT) -> RobotsRules:
        """No robots.txt (404/410 and other 4xx): everything may be fetched."""
        return cls(user_agent=user_agent, verdict="allow_all")

    @classmethod
    def disallow_all(cls, *, user_agent: str = USER_AGENT) -> RobotsRules:
        """robots.txt unreachable (5xx, 429, network error) or refused (401/403): fetch nothing."""
        return cls(user_agent=user_agent, verdict="disallow_all")

    @classmethod
    def from_status(
        cls, status: int, body: bytes = b"", *, user_agent: str = USER_AGENT
    ) -> RobotsRules:
        """Rules from the response to ``GET /robots.txt`` (see the table in the module docstring).

        Raises:
            ValueError: ``status`` is not an HTTP status code.
        """
        if not 100 <= status <= 599:
            raise ValueError(f"{status} is not an HTTP status")
        if 200 <= status < 300:
            return cls.parse(body, user_agent=user_agent)
        if status in {401, 403, 429} or status >= 500 or status < 200:
            return cls.disallow_all(user_agent=user_agent)
        return cls.allow_all(user_agent=user_agent)

    def can_fetch(self, url: str) -> bool:
        """Whether our group (or ``*``) allows ``url``."""
        if self.parser is None:
            return self.verdict == "allow_all"
        return self.parser.can_fetch(url, self.user_agent)

    @property
    def crawl_delay(self) -> float | None:
        """``Crawl-delay`` of the applying group, in seconds; ``None`` when it sets none."""
        return None if self.parser is None else self.parser.crawl_delay(self.user_agent)

    @property
    def request_rate(self) -> RequestRate | None:
        """``Request-rate`` of the applying group; ``None`` when it sets none."""
        rate = None if self.parser is None else self.parser.request_rate(self.user_agent)
        return None if rate is None else RequestRate(rate.requests, rate.seconds)

    @property
    def sitemaps(self) -> tuple[str, ...]:
        """``Sitemap:`` lines, in file order (they belong to no group)."""
        return () if self.parser is None else tuple(self.parser.sitemaps)
