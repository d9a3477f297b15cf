"""Citations stay inside the repository: code and docs point at `docs/…md#section`, and those exist.

Design notes that are not in the repository used to be cited by section number (the design's
section 7, the domain brief's 1.2); what the code needs from them lives in ``docs/`` now
(``docs/domain.md``, ``docs/architecture.md``).
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TREES = ("packages", "connectors", "workers", "docs", "tests", "bench", "migrations")
SUFFIXES = {".py", ".md", ".toml"}

# Written in two halves so this file does not match itself.
OUTSIDE = re.compile("(?:DESIGN|DOMAIN)" + r" §")
CITATION = re.compile(r"(?<![\w/.])docs/([\w-]+\.md)(?:#([\w-]+))?")
LINK = re.compile(r"\]\(([\w-]+\.md)#([\w-]+)\)")


def _files() -> list[Path]:
    return [
        path
        for tree in TREES
        for path in sorted((REPO / tree).rglob("*"))
        if path.suffix in SUFFIXES and path.is_file() and ".venv" not in path.parts
    ]


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to ``-``."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    return {_slug(m[1]) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", doc.read_text(), re.MULTILINE)}


def test_nothing_cites_design_notes_outside_the_repository() -> None:
    hits = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in _files()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1)
        if OUTSIDE.search(line)
    ]
    assert not hits, "\n".join(hits)


def test_every_docs_citation_names_a_page_and_a_section_that_exist() -> None:
    cited = 0
    broken = []
    for path in _files():
        text = path.read_text(errors="replace")
        found = [(m[1], m[2]) for m in CITATION.finditer(text)]
        if path.parent == REPO / "docs":
            found += [(m[1], m[2]) for m in LINK.finditer(text)]
        for page, anchor in found:
            cited += 1
            doc = REPO / "docs" / page
            if not doc.is_file():
                broken.append(f"{path.relative_to(REPO)}: no page docs/{page}")
            elif anchor and anchor not in _anchors(doc):
                broken.append(f"{path.relative_to(REPO)}: no section docs/{page}#{anchor}")
    assert not broken, "\n".join(broken)
    assert cited > 40  # the check is not vacuous: the code cites the docs this often


def test_the_slug_rule_matches_github() -> None:
    assert _slug("1. Attribution rules") == "1-attribution-rules"
    assert _slug("How a crawl is scheduled, run and made safe") == (
        "how-a-crawl-is-scheduled-run-and-made-safe"
    )
    assert _slug("2. Entity resolution (`rareindex.resolution`, actor `resolve_pending`)") == (
        "2-entity-resolution-rareindexresolution-actor-resolve_pending"
    )
