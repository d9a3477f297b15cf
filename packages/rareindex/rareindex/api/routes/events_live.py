"""``GET /events/live``: a small page that shows change events as they arrive.

No token is needed for the page itself (it holds no data); its script reads the token from the
URL's fragment (``/events/live#token=rit_…``, never sent to the server), subscribes to
``/api/events`` with ``EventSource`` and lists each event on arrival, newest first.
``EventSource`` reconnects by itself when the server goes away, sending ``Last-Event-ID``, so
after a restart the page goes on where it stopped. Everything is inline: no CDN, no framework.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

__all__ = ["PAGE", "router"]

router = APIRouter(tags=["events"])

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<title>RareIndex — live events</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #222; }
#status { font-weight: 600; }
#status.open { color: #1a7f37; } #status.closed { color: #b42318; }
ol { list-style: none; padding: 0; }
li { border-bottom: 1px solid #eee; padding: .3rem 0; font-family: ui-monospace, monospace; }
.type { font-weight: 600; margin-right: .6rem; }
</style>
</head>
<body>
<h1>Live events</h1>
<p>Stream: <span id="status">connecting</span> · events received: <span id="count">0</span>
 · last cursor: <span id="last">–</span></p>
<ol id="events"></ol>
<script>
(function () {
  var params = new URLSearchParams(location.hash.slice(1));
  var query = new URLSearchParams(location.search);
  var token = params.get("token") || "";
  var api = new URLSearchParams();
  api.set("access_token", token);
  ["type", "category", "asset", "variant", "connector", "watchlist", "cursor"].forEach(
    function (key) { query.getAll(key).forEach(function (v) { api.append(key, v); }); });
  var list = document.getElementById("events");
  var status = document.getElementById("status");
  var count = 0;
  var types = ["sale.recorded", "auction_lot.result", "listing.appeared",
               "listing.price_changed", "listing.ended", "cert.mismatch",
               "connector.health_changed", "estimate.moved", "review.accepted",
               "reset", "token_revoked"];
  var source = new EventSource("/api/events?" + api.toString());
  function show(message) {
    var data = JSON.parse(message.data);
    var item = document.createElement("li");
    item.dataset.cursor = message.lastEventId;
    item.dataset.type = message.type;
    var kind = document.createElement("span");
    kind.className = "type";
    kind.textContent = message.type;
    item.appendChild(kind);
    var text = (data.cursor ? "#" + data.cursor + " " : "") + (data.stream || data.detail || "");
    var price = data.payload && (data.payload.price || data.payload["new"]);
    if (price) { text += " " + price + " " + (data.payload.currency || ""); }
    item.appendChild(document.createTextNode(text));
    list.insertBefore(item, list.firstChild);
    count += 1;
    document.getElementById("count").textContent = String(count);
    document.getElementById("last").textContent = message.lastEventId || "–";
    if (message.type === "token_revoked") { source.close(); status.textContent = "revoked"; }
  }
  types.forEach(function (t) { source.addEventListener(t, show); });
  source.onopen = function () { status.textContent = "open"; status.className = "open"; };
  source.onerror = function () {
    status.textContent = source.readyState === 2 ? "closed" : "reconnecting";
    status.className = "closed";
  };
})();
</script>
</body>
</html>
"""


@router.get("/events/live", response_class=HTMLResponse, include_in_schema=False)
async def live_page() -> HTMLResponse:
    """The live events page (see the module)."""
    return HTMLResponse(PAGE, headers={"Cache-Control": "no-store"})
