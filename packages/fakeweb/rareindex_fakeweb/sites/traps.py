"""``traps.fake.test``: pages that break adapters and connectors on purpose.

======================  ==========================================================================
``/products.json``      Shopify-shaped; ``?page=N`` for N >= 3 returns page 3 again, forever: a
                        pager that waits for an empty page never stops.
``/px``                 PerimeterX block page (403, ``_pxAppId``, ``captcha.px-cdn.net``,
                        ``whywasiblocked``); with ``Accept: application/json`` the JSON block.
``/akamai``             Akamai "Access Denied ... Reference #" (403, ``server: AkamaiGHost``).
``/datadome``           DataDome captcha (403, ``x-datadome: protected``, ``var dd={'rt':'c'``).
``/cloudflare``         Cloudflare managed challenge (403, ``cf-mitigated: challenge``).
``/robots.txt``         ``Disallow: /private/`` (``/private/...`` answers 200, so a test can tell
                        from the host log whether a crawler obeyed).
``/malformed.json``     200, ``application/json``, a missing comma.
``/truncated.json``     200, ``application/json``, cut off mid-object.
``/mis-encoded``        HTML declared UTF-8 (header and ``<meta>``) whose bytes are Latin-1.
``/slow``               answers after 2 s (early if the client hangs up).
======================  ==========================================================================

Every challenge page here is one :func:`rareindex_connectors.is_challenge_page` calls blocked.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ..servers import linger
from ._web import json_bytes, json_response

__all__ = ["HOST", "TRAP_PATHS", "Traps"]

HOST = "traps.fake.test"
SLOW_S = 2.0
TRAP_PATHS = (
    "/products.json",
    "/px",
    "/akamai",
    "/datadome",
    "/cloudflare",
    "/robots.txt",
    "/malformed.json",
    "/truncated.json",
    "/mis-encoded",
    "/slow",
)

PERIMETERX = """<!DOCTYPE html>
<html lang="en"><head><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="px-captcha"><title>Access to this page has been denied</title>
</head><body><section class="center-wrapper"><div class="page-title"><h1>Before we continue...</h1>
</div><div class="content"><p>Press &amp; Hold to confirm you are<br>a human (and not a bot).</p>
<div id="px-captcha"></div><p>Access to this page has been denied because we believe you are using
automation tools to browse the website.</p>
<p>Reference ID: #2b0c6a90-aec5-11ef-9c3e-5d7a1b2c3d4e</p>
</div><div class="page-footer"><p>Powered by
<a href="https://www.perimeterx.com/whywasiblocked">PerimeterX</a>, Inc.</p></div></section>
<script>window._pxAppId = 'PXa1b2c3d4'; window._pxJsClientSrc = '/a1b2c3d4/init.js';
window._pxFirstPartyEnabled = true; window._pxHostUrl = '/a1b2c3d4/xhr';
var pxCaptchaSrc = 'https://captcha.px-cdn.net/PXa1b2c3d4/captcha.js?a=c&u=2b0c6a90&v=&m=0';
var script = document.createElement('script');
script.src = '/a1b2c3d4/captcha/captcha.js?a=c&u=2b0c6a90&v=&m=0';
document.head.appendChild(script);</script></body></html>
"""
PERIMETERX_JSON = {
    "appId": "PXa1b2c3d4",
    "jsClientSrc": "/a1b2c3d4/init.js",
    "firstPartyEnabled": True,
    "vid": "",
    "uuid": "3c1d7b01-aec5-11ef-8f2a-6e8b2c3d4e5f",
    "hostUrl": "/a1b2c3d4/xhr",
    "blockScript": "/a1b2c3d4/captcha/captcha.js?a=c&u=3c1d7b01&v=&m=0",
    "altBlockScript": "https://captcha.px-cdn.net/PXa1b2c3d4/captcha.js?a=c&u=3c1d7b01&v=&m=0",
    "customLogo": None,
}
AKAMAI = """<HTML><HEAD>
<TITLE>Access Denied</TITLE>
</HEAD><BODY>
<H1>Access Denied</H1>

You don't have permission to access "http&#58;&#47;&#47;traps&#46;fake&#46;test&#47;akamai" on this\
 server.<P>
Reference&#32;&#35;18&#46;8f3d4c17&#46;1732950000&#46;1a2b3c4d
<P>https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;18&#46;8f3d4c17&#46;1732950000&#46;1a2b3c4d</P>
</BODY>
</HTML>
"""
DATADOME = (
    '<html lang="en"><head><title>traps.fake.test</title></head><body style="margin:0">'
    '<p id="cmsg">Please enable JS and disable any ad blocker</p>'
    "<script data-cfasync=\"false\">var dd={'rt':'c','cid':'AHrlqAAAAAMA7Y2xq3V1kPcAXbQ1pg==',"
    "'hsh':'A55FBF4311ED6F1BF9911EB71931D5','t':'fe','s':17434,'host':'geo.captcha-delivery.com'}"
    '</script><script data-cfasync="false" src="https://ct.captcha-delivery.com/c.js"></script>'
    "</body></html>"
)
CLOUDFLARE = (
    '<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>'
    '<meta http-equiv="Content-Type" content="text/html; charset=UTF-8">'
    '<meta name="robots" content="noindex,nofollow"></head><body><div class="main-wrapper" '
    'role="main"><div class="main-content"><noscript><div class="h2">'
    '<span id="challenge-error-text">'
    "Enable JavaScript and cookies to continue</span></div></noscript></div></div><script>"
    "(function(){window._cf_chl_opt={cvId: '3',cZone: \"traps.fake.test\",cType: 'managed',"
    "cRay: '8f2c1a9e4b7d3c21',cUPMDTk: \"\\/cloudflare?__cf_chl_tk=Zk3pX0rQ7sVb2mNwE9yHcT1u\"};"
    "var cpo = document.createElement('script');"
    "cpo.src = '/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8f2c1a9e4b7d3c21';"
    "document.getElementsByTagName('head')[0].appendChild(cpo);}());</script></body></html>"
)
MALFORMED = b'{"products": [{"id": 1, "title": "Charizard 4/102 PSA 9" "price": "4100.00"}]}'
TRUNCATED = (
    b'{"products": [{"id": 1, "title": "Charizard 4/102 PSA 9", "price": "4100.00"}, {"id": 2,'
)
MIS_ENCODED = (
    (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Pokémon Base Set Charizard</title>'
        "</head><body><h1>Pokémon Base Set Charizard 4/102 Holo – Near Mint</h1>"
        "<p class='price'>£1,250.00</p><p>Graded ½ grade below the comp. 10° off-centre.</p>"
        "</body></html>"
    )
    .replace("–", "-")
    .encode("latin-1")
)
ROBOTS = "User-agent: *\nDisallow: /private/\n"


def _forever_page(number: int) -> bytes:
    shown = min(max(number, 1), 3)  # pages 3, 4, 5 ... are all page 3
    products = [
        {
            "id": shown * 100 + i,
            "title": f"Trap Card {shown}-{i} PSA 9",
            "handle": f"trap-{shown}-{i}",
            "variants": [{"id": shown * 1000 + i, "price": "19.99", "available": True}],
        }
        for i in range(5)
    ]  # fmt: skip
    return json_bytes({"products": products})


class Traps:
    """The traps handler (stateless)."""

    async def __call__(self, request: Request) -> Response:
        path = request.url.path
        if path == "/products.json":
            raw = request.query_params.get("page", "1")
            number = int(raw) if raw.isdigit() else 1
            return Response(_forever_page(number), media_type="application/json; charset=utf-8")
        if path == "/px":
            headers = {"set-cookie": "_pxhd=Zm9vYmFy:2b0c6a90-aec5-11ef; Path=/"}
            if "application/json" in request.headers.get("accept", ""):
                return json_response(PERIMETERX_JSON, 403, headers)
            return _html(PERIMETERX, headers)
        if path == "/akamai":
            return _html(AKAMAI, {"server": "AkamaiGHost", "mime-version": "1.0"})
        if path == "/datadome":
            headers = {
                "x-datadome": "protected",
                "x-datadome-cid": "AHrlqAAAAAMA7Y2xq3V1kPcAXbQ1pg==",
                "x-dd-b": "2",
                "set-cookie": "datadome=Qm9nVXNDb29raWVWYWx1ZQ~~; Max-Age=31536000; Path=/",
            }
            return _html(DATADOME, headers)
        if path == "/cloudflare":
            headers = {
                "cf-mitigated": "challenge",
                "server": "cloudflare",
                "cf-ray": "8f2c1a9e4b7d3c21-IAD",
            }
            return _html(CLOUDFLARE, headers)
        if path == "/robots.txt":
            return Response(ROBOTS, media_type="text/plain; charset=utf-8")
        if path.startswith("/private/"):
            return Response(
                "You should not be here: robots.txt disallows /private/.\n", media_type="text/plain"
            )
        if path == "/malformed.json":
            return Response(MALFORMED, media_type="application/json")
        if path == "/truncated.json":
            return Response(TRUNCATED, media_type="application/json")
        if path == "/mis-encoded":
            return Response(MIS_ENCODED, media_type="text/html; charset=utf-8")
        if path == "/slow":
            await linger(request, SLOW_S)
            return json_response({"slow": True, "seconds": SLOW_S})
        if path == "/":
            return Response("\n".join(TRAP_PATHS) + "\n", media_type="text/plain")
        return Response("not found", status_code=404, media_type="text/plain")


def _html(body: str, headers: dict[str, str]) -> Response:
    return Response(body, status_code=403, headers=headers, media_type="text/html; charset=utf-8")
