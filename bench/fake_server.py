"""A minimal page server for benchmarks, in its own process so it does not share the client's
GIL: every path answers the same ~20 KB JSON document. ``python -m bench.fake_server PORT``."""

from __future__ import annotations

import json
import sys
from typing import Any

import uvicorn

BODY = json.dumps(
    {
        "products": [
            {
                "id": i,
                "title": f"1999 Pokemon Base Set Charizard #{i} Holo PSA 9",
                "price": f"{100 + i}.00",
                "vendor": "Demo Cards",
                "tags": ["pokemon", "psa"],
            }
            for i in range(160)
        ]
    }
).encode()
HEADERS = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            await send({"type": message["type"] + ".complete"})
            if message["type"] == "lifespan.shutdown":
                return
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": BODY})


def main(port: int) -> None:
    try:
        import httptools  # noqa: F401 - the faster HTTP parser, when installed

        http = "httptools"
    except ImportError:
        http = "h11"
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        http=http,
        loop="asyncio",
    )


if __name__ == "__main__":
    main(int(sys.argv[1]))
