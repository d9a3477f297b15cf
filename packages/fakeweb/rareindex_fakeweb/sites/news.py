"""``news.fake.test``: hobby news with an RSS 2.0 and an Atom 1.0 feed of the same 30 stories.

Paths: ``/feed.rss`` (``pubDate`` in RFC 822, some descriptions HTML in CDATA, some entity-escaped,
some plain text), ``/feed.atom`` (``summary``/``content`` ``type="html"``, tag-URI ids that do not
depend on the host), ``/articles/<slug>`` (the story, with Open Graph tags and ``NewsArticle``
JSON-LD). Record-sale stories link to the auction house's lot pages.
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from xml.sax.saxutils import escape as xml_escape

from starlette.requests import Request
from starlette.responses import Response

from ._web import (
    PIXEL_GIF,
    Lazy,
    esc,
    html_response,
    moment,
    not_found,
    origin,
    page,
    script_json,
    site_rng,
    slugify,
    us_offset,
)
from .auction_data import HOST as AUCTION_HOST
from .auction_data import build_auction
from .auction_pdf import money
from .world import World, world

__all__ = ["HOST", "Article", "NewsSite", "articles"]

HOST = "news.fake.test"
SITE = "Hobby Wire"
AUTHORS = ("Dana Whitfield", "Marco Bellini", "Aiko Tanaka", "Sam O'Connell")
ANNOUNCEMENTS = (
    ("PSA", "PSA adjusts grading fees for modern cards", "Turnaround tiers change on 1 June."),
    ("CGC", "CGC Cards launches a Pristine 10 label", "The new label sits above Gem Mint 10."),
    ("BGS", "Beckett brings back subgrades on every tier", "Centering, corners, edges, surface."),
    ("PCGS", "PCGS opens a submission centre in Paris", "European collectors can submit locally."),
    ("NGC", "NGC adds pedigree labels for ancient coins", "The first pedigrees ship this spring."),
    ("Pokémon", "Pokémon 151 reprint wave hits stores", "Booster bundles are back on shelves."),
)


@dataclass(frozen=True, slots=True)
class Article:
    slug: str
    title: str
    summary_html: str
    body_html: str
    published: datetime
    updated: datetime
    author: str
    category: str
    summary_style: str
    """How the RSS description is written: ``cdata``, ``escaped`` (HTML as entities) or ``text``."""

    @property
    def path(self) -> str:
        return f"/articles/{self.slug}"


@functools.lru_cache(maxsize=4)
def articles(seed: int) -> tuple[Article, ...]:
    """The 30 stories for ``seed``, newest first (ground truth for tests)."""
    return build_articles(seed, world(seed))


def build_articles(seed: int, world_: World) -> tuple[Article, ...]:
    rng = site_rng(seed, HOST)
    sold = [lot for lot in build_auction(seed, world_).lots() if lot.realised]
    top = sorted(sold, key=lambda lot: (-(lot.realised or 0), lot.path))[:12]
    graded = [c for c in world_.market if c.grade.graded]
    made: list[Article] = []
    for n in range(30):
        kind = n % 3
        if kind == 0 and top:
            lot = top.pop(0)
            price = money(lot.realised or 0, lot.currency)
            title = f"Record: {lot.title} realises {price}"
            summary = (
                f"<p>Lot {lot.number} of sale {lot.sale_id} closed at <strong>{esc(price)}</strong>"
                f" including the buyer&#8217;s premium. <a href='http://{AUCTION_HOST}{lot.path}'>"
                "See the lot</a>.</p>"
            )
            category = "Auctions"
        elif kind == 1:
            copy = rng.choice(graded)
            title = f"Market watch: {copy.item.title} & the {copy.grade.phrase} premium"
            summary = (
                f"<p>Sales of <em>{esc(copy.item.title)}</em> in {esc(copy.grade.phrase)} "
                f"averaged {esc(money(copy.value_cents(rng), 'USD'))} this month.</p>"
                f"<img src='http://{HOST}/img/{n}.jpg' alt=''>"
            )
            category = "Market"
        else:
            who, title, line = ANNOUNCEMENTS[(n // 3) % len(ANNOUNCEMENTS)]
            summary = f"<p>{esc(line)} {esc(who)} says details &amp; dates follow.</p>"
            category = "Industry"
        published = moment(rng, days=90)
        made.append(
            Article(
                slug=f"{slugify(title)[:60].rstrip('-')}-{n + 1}",
                title=title,
                summary_html=summary,
                body_html=summary + "<p>" + " ".join(_filler(rng)) + "</p>",
                published=published,
                updated=published + timedelta(hours=rng.choice((0, 0, 2, 26))),
                author=rng.choice(AUTHORS),
                category=category,
                summary_style=("cdata", "escaped", "text")[n % 3 if n % 5 else 2],
            )
        )
    return tuple(sorted(made, key=lambda a: (-a.published.timestamp(), a.slug)))


def _filler(rng: random.Random) -> list[str]:
    words = ("collectors", "graded", "population", "auction", "rookie", "demand", "supply", "slab")
    return [rng.choice(words) for _ in range(40)]


def _plain(html_text: str) -> str:
    text = re.sub(r"<[^>]+>", "", html_text)
    return text.replace("&amp;", "&").replace("&#8217;", "\u2019")


def _pub_date(when: datetime) -> str:
    # Some stories in GMT, the rest in US Eastern with a numeric zone: both are RFC 822.
    if when.minute % 2:
        return format_datetime(when, usegmt=True)
    eastern = timezone(timedelta(hours=us_offset(when, -5)))
    return format_datetime(when.astimezone(eastern))


def _description(article: Article) -> str:
    if article.summary_style == "cdata":
        return f"<![CDATA[{article.summary_html}]]>"
    if article.summary_style == "escaped":
        return xml_escape(article.summary_html)
    return xml_escape(_plain(article.summary_html))


def rss(items: tuple[Article, ...], base: str) -> str:
    """The RSS 2.0 feed."""
    entries = "".join(
        "<item>"
        f"<title>{xml_escape(a.title)}</title>"
        f"<link>{base}{a.path}</link>"
        f'<guid isPermaLink="true">{base}{a.path}</guid>'
        f"<pubDate>{_pub_date(a.published)}</pubDate>"
        f"<dc:creator>{xml_escape(a.author)}</dc:creator>"
        f"<category>{xml_escape(a.category)}</category>"
        f"<description>{_description(a)}</description>"
        "</item>\n"
        for a in items
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/">\n<channel>\n'
        f"<title>{SITE}</title><link>{base}/</link>"
        "<description>News from the collectibles market</description><language>en-us</language>"
        f"<lastBuildDate>{format_datetime(items[0].updated, usegmt=True)}</lastBuildDate>"
        f'<atom:link href="{base}/feed.rss" rel="self" type="application/rss+xml"/>\n'
        f"{entries}</channel>\n</rss>\n"
    )


def atom(items: tuple[Article, ...], base: str) -> str:
    """The Atom 1.0 feed; ids are tag URIs, stable whatever host the client used."""
    entries = "".join(
        "<entry>"
        f"<title>{xml_escape(a.title)}</title>"
        f'<link rel="alternate" type="text/html" href="{base}{a.path}"/>'
        f"<id>tag:{HOST},2026:{a.path}</id>"
        f"<published>{a.published.isoformat()}</published>"
        f"<updated>{a.updated.isoformat()}</updated>"
        f"<author><name>{xml_escape(a.author)}</name></author>"
        f'<category term="{xml_escape(a.category)}"/>'
        f'<summary type="html">{xml_escape(a.summary_html)}</summary>'
        f'<content type="html">{xml_escape(a.body_html)}</content>'
        "</entry>\n"
        for a in items
    )
    updated = max(a.updated for a in items)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
        f"<title>{SITE}</title><subtitle>News from the collectibles market</subtitle>"
        f'<link rel="self" type="application/atom+xml" href="{base}/feed.atom"/>'
        f'<link rel="alternate" type="text/html" href="{base}/"/>'
        f"<id>tag:{HOST},2026:feed</id><updated>{updated.isoformat()}</updated>\n"
        f"{entries}</feed>\n"
    )


def _article_page(article: Article, base: str) -> str:
    url = f"{base}{article.path}"
    ld = {
        "@context": "https://schema.org",
        "@type": "NewsArticle",
        "headline": article.title,
        "datePublished": article.published.isoformat(),
        "dateModified": article.updated.isoformat(),
        "author": {"@type": "Person", "name": article.author},
        "mainEntityOfPage": url,
    }
    head = (
        '<meta property="og:type" content="article">'
        f'<meta property="og:title" content="{esc(article.title)}">'
        f'<meta property="og:url" content="{esc(url)}">'
        f'<meta property="article:published_time" content="{article.published.isoformat()}">'
        f'<script type="application/ld+json">{script_json(ld)}</script>'
    )
    body = (
        f"<article><h1>{esc(article.title)}</h1>"
        f'<p class="byline">By {esc(article.author)}, '
        f'<time datetime="{article.published.isoformat()}">{article.published:%d %B %Y}</time></p>'
        f"{article.body_html}</article>"
    )
    return page(f"{article.title} | {SITE}", body, head=head)


class NewsSite:
    """The news handler; stories are built on the first request."""

    def __init__(self, seed: int, world_: Lazy[World]) -> None:
        self._items = Lazy(lambda: build_articles(seed, world_.get()))

    async def __call__(self, request: Request) -> Response:
        items = self._items.get()
        base = origin(request, HOST)
        path = request.url.path
        if path == "/feed.rss":
            return Response(rss(items, base), media_type="application/rss+xml; charset=utf-8")
        if path == "/feed.atom":
            return Response(atom(items, base), media_type="application/atom+xml; charset=utf-8")
        if path.startswith("/articles/"):
            found = next((a for a in items if a.path == path), None)
            return html_response(_article_page(found, base)) if found else not_found("Article")
        if path.startswith("/img/"):
            return Response(PIXEL_GIF, media_type="image/gif")
        if path == "/":
            links = "".join(f'<li><a href="{a.path}">{esc(a.title)}</a></li>' for a in items)
            return html_response(page(SITE, f"<h1>{SITE}</h1><ul>{links}</ul>"))
        return not_found()
