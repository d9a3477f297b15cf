"""Cert numbers in titles, per docs/certificates.md#1-attribution-rules: every rule on its own, then
every fake market title.

Rules: attribution within 4 tokens of a grader token or ``Cert#``; exclusions (card numbers,
serials, years, item ids, UPC/EAN); negation and speculation keep the number without a grader;
bare numbers are ambiguous with candidates by shape, never assigned; two graders pair each number
with its nearest mention and flag it; item specifics attribute outright. Then the whole fake
marketplace against its ground truth, and the mismatch signal against the grading registry's.
"""

from __future__ import annotations

import pytest

from rareindex.certs.extract import (
    CertMention,
    candidates_for,
    cert_key,
    extract_certs,
    parse_cert_number,
    parse_grader,
    title_mismatch,
    title_years,
)
from rareindex_fakeweb.sites.grader import cert_record, grader_data
from rareindex_fakeweb.sites.market import _specifics
from rareindex_fakeweb.sites.market_data import market_data
from rareindex_fakeweb.sites.truth import cert_numbers

MARKET = market_data(7)
REGISTRY = grader_data(7)
PSA_SPECIFICS = {"Professional Grader": "Professional Sports Authenticator (PSA)"}


def one(title: str, specifics: dict[str, str] | None = None) -> CertMention:
    [mention] = extract_certs(title, specifics)
    return mention


# --- rule 1: attribution --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "number", "grader"),
    [
        ("2018 Prizm Luka Doncic #280 PSA 10 GEM MINT #12345678", "12345678", "PSA"),
        ("Charizard 4/102 BGS 9.5 0012345678", "0012345678", "BGS"),
        ("Charizard 4/102 Beckett 9.5 0012345678", "0012345678", "BGS"),
        ("Spawn #1 CGC 9.8 4321000-001", "4321000-001", "CGC"),
        ("1881-S Morgan $1 NGC MS65 Ultra Cameo 1234567-001", "1234567-001", "NGC"),
        ("1924 Buffalo Nickel PCGS MS65RD 12345678", "12345678", "PCGS"),
        ("1999 Pokemon Aerodactyl 1/62 SGC 9 1234567", "1234567", "SGC"),
        ("psa 8 nm-mt (OC) 12345678 Jordan", "12345678", "PSA"),
        ("12345678 PSA 10 Jordan", "12345678", "PSA"),  # before the grader, still within 4
        ("PSA 10 GEM MINT Charizard Base Set Holo Cert# 123456789", "123456789", "PSA"),
        ("Charizard CGC 9.5 Cert#4321000001", "4321000001", "CGC"),
        ("Charizard BGS 9 cert: 0012345678", "0012345678", "BGS"),
        ("Jordan PSA 9 see psacard.com/cert/87654321", "87654321", "PSA"),
    ],
)
def test_a_number_near_a_grader_or_cert_label_is_attributed(
    title: str, number: str, grader: str
) -> None:
    mention = one(title)
    assert (mention.number, mention.grader, mention.attribution) == (number, grader, "attributed")
    assert mention.candidates == () and "title" in mention.flags


def test_a_number_farther_than_four_tokens_from_its_grader_is_not_attributed() -> None:
    near = one("PSA 10 Luka Doncic Prizm 12345678")  # the 4th token after the grade
    far = one("PSA 10 Luka Doncic Prizm Silver 12345678")  # the 5th
    assert (near.grader, near.attribution) == ("PSA", "attributed")
    assert (far.grader, far.attribution) == (None, "ambiguous")


def test_a_cert_label_reaches_the_grader_at_any_distance_and_is_flagged() -> None:
    mention = one("PSA 10 GEM MINT Charizard Base Set 4/102 Holo Unlimited WOTC Cert# 12345678")
    assert (mention.grader, mention.attribution) == ("PSA", "attributed")
    assert "cert_label" in mention.flags
    labelled_only = one("Charizard Base Set Cert# 12345678")  # a cert, but whose?
    assert (labelled_only.grader, labelled_only.attribution) == (None, "ambiguous")
    assert labelled_only.candidates == ("PSA", "PCGS")


# --- rule 2: exclusions ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "title",
    [
        "1986 Fleer Michael Jordan #57 PSA 8",  # card number
        "2018 Prizm Luka Doncic #2800 PSA 10",  # four-digit card number
        "2020 Prizm Joe Burrow Gold #'d 23/99 PSA 10",  # serial
        "2020 Prizm Joe Burrow Gold /99 PSA 10",  # print run
        "2020 Prizm Joe Burrow Gold 1234567/99 PSA 10",  # a serial, however long
        "1999 Pokemon Charizard PSA 10 2021",  # years
        "Jordan PSA 10 same as 256711097386",  # 12-digit item id
        "Spawn #1 CGC 9.8 UPC 759606089368",  # 12-digit UPC
        "Spawn #1 CGC 9.8 EAN 9780785199571",  # 13-digit EAN
        "Spawn #1 CGC 9.8 75960608936800111",  # UPC with its 5-digit add-on
        "Jordan PSA 10 $1250000",  # a price
        "Jordan PSA 10 123456",  # 6 digits
        "Jordan PSA 10 12345678901",  # 11 digits
        "Jordan PSA 10 1234567-01",  # a dash not followed by three digits
        "Charizard PSA ١٢٣٤٥٦٧٨",  # Arabic-Indic digits: no grader numbers certs so
        "Charizard PSA 10 ۱۲۳۴۵۶۷۸",  # Persian digits
    ],
)
def test_card_numbers_serials_years_item_ids_and_upcs_are_never_certs(title: str) -> None:
    assert extract_certs(title) == []


# --- rule 3: negation and speculation -------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "flag"),
    [
        ("Charizard 4/102 Raw NOT PSA 12345678", "negated"),
        ("Charizard 4/102 not a graded PSA 12345678", "negated"),
        ("Charizard NOT PSA BGS 0012345678", "negated"),
        ("PSA 10 crossed from BGS 9.5 0012345678", "negated"),
        ("Jordan cracked out of PSA 8 12345678", "negated"),
        ("Charizard PSA 10? 12345678", "speculative"),
        ("Charizard PSA 10 candidate 12345678", "speculative"),
        ("Charizard (PSA 10 candidate?) 12345678", "speculative"),
        ("Charizard BGS 9.5 comp 0012345678", "speculative"),
        ("Charizard potential PSA 10 12345678", "speculative"),
        ("Charizard could be PSA 10 12345678", "speculative"),
    ],
)
def test_a_negated_or_speculative_grader_keeps_the_number_without_a_grader(
    title: str, flag: str
) -> None:
    mention = one(title)
    assert (mention.grader, mention.attribution, mention.candidates) == (None, "negated", ())
    assert flag in mention.flags


def test_an_affirmative_grade_beside_a_negated_one_still_counts() -> None:
    [psa, bgs] = extract_certs("PSA 10 12345678 crossed from BGS 9.5 0012345678")
    assert (psa.grader, psa.attribution) == ("PSA", "attributed")
    assert (bgs.grader, bgs.attribution) == (None, "negated")


# --- rule 4: bare numbers -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "candidates"),
    [
        ("1234567", ("SGC", "PSA")),
        ("12345678", ("PSA", "PCGS")),
        ("123456789", ("PSA",)),
        ("0012345678", ("BGS", "CGC", "PSA")),
        ("4296093036", ("CGC", "BGS", "PSA")),
        ("3193674-002", ("NGC", "CGC")),
    ],
)
def test_a_bare_number_is_ambiguous_with_candidates_by_shape_never_assigned(
    number: str, candidates: tuple[str, ...]
) -> None:
    mention = one(f"1999 Pokemon Charizard 4/102 Holo slab {number} L@@K")
    assert (mention.grader, mention.attribution) == (None, "ambiguous")
    assert mention.candidates == candidates == candidates_for(number)


# --- rule 5: two graders --------------------------------------------------------------------


def test_two_graders_pair_each_number_with_its_nearest_mention_and_flag_it() -> None:
    bgs, psa = extract_certs("Luka BGS 9.5 0012345678 and PSA 10 12345678")
    assert (bgs.number, bgs.grader, psa.number, psa.grader) == (
        "0012345678",
        "BGS",
        "12345678",
        "PSA",
    )
    assert "two_graders" in bgs.flags and "two_graders" in psa.flags
    # a tie goes to the mention before the number: grader, grade, cert
    first, second = extract_certs("PSA 10 12345678 BGS 9.5 0012345678")
    assert (first.grader, second.grader) == ("PSA", "BGS")
    assert "two_graders" not in one("Luka PSA 10 12345678").flags


# --- item specifics -------------------------------------------------------------------------


def test_item_specifics_attribute_their_number_and_agree_with_the_title() -> None:
    stated = {**PSA_SPECIFICS, "Certification Number": "97038834"}
    only = one("Josh Allen Prizm PSA 10", stated)
    assert (only.number, only.grader, only.attribution, only.flags) == (
        "97038834",
        "PSA",
        "attributed",
        ("specifics",),
    )
    both = one("Josh Allen Prizm PSA 10 #97038834", stated)
    assert (both.grader, both.attribution, both.flags) == (
        "PSA",
        "attributed",
        ("specifics", "title"),
    )
    bare = one("Josh Allen Prizm slab 97038834", stated)  # the specifics settle a bare number
    assert (bare.grader, bare.attribution) == ("PSA", "attributed")


def test_specifics_that_disagree_with_the_title_settle_nothing() -> None:
    stated = {**PSA_SPECIFICS, "Certification Number": "97038834"}
    other = one("Josh Allen Prizm BGS 9.5 97038834", stated)
    assert (other.grader, other.attribution) == (None, "ambiguous")
    assert other.candidates == ("BGS", "PSA") and "conflict" in other.flags
    negated = one("Josh Allen Prizm Raw NOT PSA", stated)
    assert (negated.grader, negated.attribution) == (None, "negated")
    no_grader = one("Josh Allen Prizm", {"Certification Number": "97038834"})
    assert (no_grader.attribution, no_grader.candidates) == ("ambiguous", ("PSA", "PCGS"))
    assert extract_certs("Josh Allen", {**PSA_SPECIFICS, "Certification Number": "n/a"}) == []


def test_one_mention_per_number_written_with_or_without_its_dash() -> None:
    mention = one("CGC 9.8 4321000-001 Cert# 4321000001")
    assert (mention.number, mention.key, mention.grader) == ("4321000-001", "4321000001", "CGC")


def test_helpers_normalize_numbers_and_graders() -> None:
    assert cert_key("#4321000-001") == "4321000001" and cert_key("0012345678") == "0012345678"
    assert parse_cert_number("#12345678") == "12345678" and parse_cert_number("123") is None
    assert parse_grader("Beckett Grading Services (BGS)") == "BGS"
    assert parse_grader("Certified Guaranty Company") == "CGC" and parse_grader("psa") == "PSA"
    assert parse_grader("Topps") is None


# --- the fake marketplace, every title ------------------------------------------------------


def test_every_planted_cert_in_a_market_title_is_found_and_attributed_to_its_grader() -> None:
    planted = [x for x in MARKET.listings if x.cert_in_title]
    assert len(planted) > 150 and {x.grader for x in planted} == {
        "PSA",
        "BGS",
        "CGC",
        "SGC",
        "PCGS",
        "NGC",
    }
    wrong = []
    for listing in planted:
        found = [
            m for m in extract_certs(listing.title) if m.key == cert_key(listing.cert_in_title)
        ]
        if [(m.grader, m.attribution) for m in found] != [(listing.grader, "attributed")]:
            wrong.append((listing.title, found))
    assert wrong == []


def test_no_card_number_serial_year_or_item_id_in_a_market_title_is_read_as_a_cert() -> None:
    certs = {cert_key(c) for c in cert_numbers(7)}
    noisy = {"serial", "item_id"}
    assert all(any(noisy & set(x.flags) for x in MARKET.listings) for _ in noisy)
    extracted = [(x.title, m) for x in MARKET.listings for m in extract_certs(x.title)]
    assert [(t, m) for t, m in extracted if m.key not in certs] == []
    by_listing = {x.item_id: [m.key for m in extract_certs(x.title)] for x in MARKET.listings}
    assert all(
        by_listing[x.item_id] == ([cert_key(x.cert_in_title)] if x.cert_in_title else [])
        for x in MARKET.listings
    )


def test_negated_and_speculative_market_listings_get_no_grader() -> None:
    hedged = [x for x in MARKET.listings if {"negated", "speculative", "comp"} & set(x.flags)]
    assert len(hedged) > 30
    for listing in hedged:
        mentions = extract_certs(listing.title, _specifics(listing))
        assert all(m.grader is None for m in mentions), listing.title
    # the same hedges with a cert number beside them keep it, without a grader
    for listing in hedged:
        [mention] = extract_certs(f"{listing.title} 12345678")
        assert (mention.grader, mention.attribution) in {(None, "negated"), (None, "ambiguous")}


def test_item_specifics_attribute_every_graded_market_copy() -> None:
    graded = [x for x in MARKET.listings if x.cert]
    for listing in graded:
        mentions = extract_certs(listing.title, _specifics(listing))
        assert [(m.key, m.grader, m.attribution) for m in mentions] == [
            (cert_key(listing.cert), listing.grader, "attributed")  # type: ignore[arg-type]
        ], listing.title


# --- the mismatch signal --------------------------------------------------------------------


def test_title_years_skip_card_numbers_serials_prices_and_cert_digits() -> None:
    assert title_years("1937-D Buffalo Nickel (1937) #2000 /1999 $2019 4142127-020") == {1937}
    assert title_years("2020-21 Panini Prizm LaMelo Ball") == {2020, 2021}
    assert title_years("Spawn #1 CGC 9.8") == set()


@pytest.mark.parametrize(
    ("title", "subject", "year", "expected"),
    [
        ("2018 Panini Prizm Josh Allen #205 PSA 10", "JOSH ALLEN", 2018, None),
        ("2018 Panini Prizm Luka Dončić #280 PSA 10", "LUKA DONCIC", 2018, None),
        ("1996 Topps Chrome Jordan #1 PSA 10", "MICHAEL JORDAN", 1996, None),  # lenient
        ("2018 Panini Prizm Josh Allen #205 PSA 10", "BAKER MAYFIELD", 2018, "subject"),
        ("2019 Panini Prizm Josh Allen #205 PSA 10", "JOSH ALLEN", 2018, "year"),
        ("2019 Panini Prizm Josh Allen #205 PSA 10", "BAKER MAYFIELD", 2018, "subject,year"),
        ("Panini Prizm Josh Allen #205 PSA 10", "JOSH ALLEN", 2018, None),  # no year stated
    ],
)
def test_title_mismatch(title: str, subject: str, year: int, expected: str | None) -> None:
    assert title_mismatch(title, subject, year) == expected


def test_only_the_planted_mistitled_market_listings_disagree_with_their_certificate() -> None:
    flagged = {}
    for listing in MARKET.listings:
        if not listing.cert:
            continue
        cert = REGISTRY.lookup(listing.cert)
        assert cert is not None
        record = cert_record(cert, REGISTRY.pops[cert.spec_id])
        signal = title_mismatch(listing.title, record["Subject"], int(record["Year"]))
        if signal:
            flagged[listing.item_id] = signal
    planted = [x for x in MARKET.listings if "mistitled" in x.flags]
    assert len(planted) == 2 and flagged.keys() == {x.item_id for x in planted}
    assert sorted(flagged.values()) == ["subject", "year"]
