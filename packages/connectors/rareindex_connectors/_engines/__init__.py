"""Fetch engines: ``api`` (direct httpx), ``firecrawl`` and ``scrapfly`` (paid, via their SDKs)."""

from .api import BROWSER_USER_AGENT, ApiEngine, bot_user_agent
from .base import Engine, FetchRequest
from .firecrawl import FirecrawlEngine
from .scrapfly import ScrapflyEngine

__all__ = [
    "BROWSER_USER_AGENT",
    "ApiEngine",
    "Engine",
    "FetchRequest",
    "FirecrawlEngine",
    "ScrapflyEngine",
    "bot_user_agent",
]
