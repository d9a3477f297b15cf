"""Hosts whose robots.txt a crawler must obey, and one whose robots.txt is down.

=========================  ==================================================================
``robots.fake.test``       ``/robots.txt``: ``Disallow: /private/`` and ``Crawl-delay`` for
                           ``*`` (:data:`CRAWL_DELAY_S`), a stricter group for ``RareIndexBot``
                           (also ``Disallow: /members/``), a ``Sitemap:`` line; ``/p/<n>``,
                           ``/private/<n>`` and ``/members/<n>`` all answer 200, so the host log
                           tells whether a crawler obeyed; ``/sitemap.xml`` lists ``/p/1..5``
``robots-down.fake.test``  ``/robots.txt`` answers 503 (no ``Retry-After``); pages answer 200
=========================  ==================================================================

Example:
    >>> "Crawl-delay: 0.3" in robots_txt("http://robots.fake.test:8080")
    True
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

__all__ = ["CRAWL_DELAY_S", "DOWN_HOST", "HOST", "RobotsDown", "RobotsHost", "robots_txt"]

HOST = "robots.fake.test"
DOWN_HOST = "robots-down.fake.test"
CRAWL_DELAY_S = 0.3
"""RareIndexBot's Crawl-delay on ``robots.fake.test`` (``*`` gets a laxer 0.1)."""


def robots_txt(base: str) -> str:
    """The robots.txt of ``robots.fake.test`` for a server at ``base``."""
    return (
        "User-agent: *\n"
        "Disallow: /private/\n"
        "Crawl-delay: 0.1\n"
        "\n"
        "User-agent: RareIndexBot\n"
        "Disallow: /private/\n"
        "Disallow: /members/\n"
        f"Crawl-delay: {CRAWL_DELAY_S}\n"
        "\n"
        f"Sitemap: {base}/sitemap.xml\n"
    )


def _base(request: Request) -> str:
    port = request.url.port
    return f"http://{HOST}{f':{port}' if port else ''}"


class RobotsHost:
    """``robots.fake.test`` (stateless)."""

    async def __call__(self, request: Request) -> Response:
        path = request.url.path
        if path == "/robots.txt":
            return Response(robots_txt(_base(request)), media_type="text/plain; charset=utf-8")
        if path == "/sitemap.xml":
            locs = "".join(f"<url><loc>{_base(request)}/p/{n}</loc></url>" for n in range(1, 6))
            body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
            return Response(body, media_type="application/xml")
        for prefix in ("/p/", "/private/", "/members/"):
            if path.startswith(prefix):
                return JSONResponse({"path": path, "title": f"Page {path.rsplit('/', 1)[-1]}"})
        return Response("not found", status_code=404, media_type="text/plain")


class RobotsDown:
    """``robots-down.fake.test``: its robots.txt is unreachable (503)."""

    async def __call__(self, request: Request) -> Response:
        if request.url.path == "/robots.txt":
            return Response("busy", status_code=503)  # down, without saying for how long
        return JSONResponse({"path": request.url.path})
