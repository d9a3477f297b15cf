"""The cert rule's home in the SDK (issue 20, item 3): its grader list is the ``Grader`` Literal's.

The rule itself is tested where the index reads titles with it: tests/unit/rareindex/
test_cert_extract.py (``rareindex.certs.extract`` re-exports this module).
"""

from __future__ import annotations

from typing import get_args

from rareindex_adapters import GRADERS, extract_certs
from rareindex_connectors._normalized import Grader


def test_graders_are_the_grader_literal_but_other() -> None:
    assert GRADERS == ("PSA", "BGS", "CGC", "SGC", "PCGS", "NGC")
    assert (*GRADERS, "OTHER") == get_args(Grader)


def test_beckett_is_read_as_bgs() -> None:
    [mention] = extract_certs("1986 Fleer Michael Jordan #57 Beckett 9.5 0012345678")
    assert (mention.grader, mention.attribution) == ("BGS", "attributed")


def test_every_lookup_url_has_the_hint_searched_before_them() -> None:
    """The four lookup-URL patterns are searched only in a title where ``_LOOKUP_HINT`` matches:
    each must spell ``.com/cert``."""
    from rareindex_adapters import certs

    for pattern, _ in certs._LOOKUP_URLS:
        assert r"\.com/cert" in pattern.pattern, pattern.pattern
    assert extract_certs("see PSACARD.COM/CERT/12345678")[0].flags == ("lookup_url", "title")


def test_the_first_character_sets_are_those_re_matches() -> None:
    """A word is matched against ``_GRADER_TOKEN`` / ``_CERT_LABEL`` only when its first character
    is in ``_GRADER_FIRST`` / ``_LABEL_FIRST``: each set must hold every character the pattern's
    first letters match (IGNORECASE included), on every code point."""
    import re
    import sys

    from rareindex_adapters import certs

    every = "".join(map(chr, range(sys.maxunicode + 1)))
    firsts = {name[0] for name in (*certs.GRADERS, "BECKETT")}
    for letters, allowed in ((firsts, certs._GRADER_FIRST), ({"C"}, certs._LABEL_FIRST)):
        first = re.compile(f"[{''.join(sorted(letters))}]", re.IGNORECASE)
        assert set(first.findall(every)) == allowed
