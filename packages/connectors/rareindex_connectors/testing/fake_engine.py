"""``FakeEngine``: an engine that answers from a script, for router and connector unit tests.

Example:
    >>> engine = FakeEngine("api", [FetchResult(url="u", status=200, content=b"{}", engine="api")])
    >>> import asyncio
    >>> asyncio.run(engine.fetch(FetchRequest("https://x.test/"))).status
    200
    >>> engine.calls
    ['https://x.test/']

``/robots.txt`` is answered apart from the script, from ``robots`` (by default a 404: allow
all), and recorded in ``robots_calls``: a router reads it before a host's first page.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from .._context import FetchResult
from .._engines.base import FetchRequest
from .._raw import EngineName
from ..errors import FetchError, PermanentFetchError

__all__ = ["FakeEngine"]

Answer = FetchResult | FetchError | Callable[[FetchRequest], FetchResult]


class FakeEngine:
    """Answers each fetch with the next scripted item (the last one repeats); records URLs."""

    def __init__(
        self,
        name: EngineName,
        answers: Sequence[Answer],
        *,
        paid: bool = False,
        unavailable: str | None = None,
        robots: Answer | None = None,
    ):
        if not answers:
            raise ValueError("a FakeEngine needs at least one answer")
        self.name: EngineName = name
        self.paid = paid
        self._answers = list(answers)
        self._unavailable = unavailable
        self._robots = robots
        self.calls: list[str] = []
        self.robots_calls: list[str] = []

    def unavailable_reason(self) -> str | None:
        return self._unavailable

    async def fetch(self, request: FetchRequest) -> FetchResult:
        if urlsplit(request.url).path == "/robots.txt":
            self.robots_calls.append(request.url)
            answer = self._robots or PermanentFetchError(
                "no robots.txt", url=request.url, status=404
            )
        else:
            self.calls.append(request.url)
            answer = self._answers[min(len(self.calls), len(self._answers)) - 1]
        if isinstance(answer, FetchError):
            raise answer
        if isinstance(answer, FetchResult):
            return answer
        return answer(request)

    async def aclose(self) -> None:
        return None
