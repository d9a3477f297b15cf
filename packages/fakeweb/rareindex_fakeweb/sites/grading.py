"""Grades and certificate numbers, in each grader's scale and format (docs/domain.md#grade-scales).

A :class:`Grade` is the variant part of a copy: grader (``None`` = raw), grade, qualifier, label
type, BGS subgrades, CGC page quality, coin designation, and the certificate number as the grader
prints it. Cert formats follow docs/domain.md#certificate-formats: PSA 8 or 9 digits, BGS 10 digits
with leading zeros, CGC 10 digits (cards sometimes ``4321000-001``), SGC 7 digits, PCGS 8 digits,
NGC ``3193674-002``. Every cert is unique across graders once dashes are removed.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from . import names
from .catalog import Item

__all__ = ["Grade", "GradeMaker", "grade_factor", "normalize_cert"]

# fmt: off
PSA_LABELS = {
    "10": "GEM MT", "9": "MINT", "8.5": "NM-MT+", "8": "NM-MT", "7.5": "NM+", "7": "NM",
    "6.5": "EX-MT+", "6": "EX-MT", "5.5": "EX+", "5": "EX", "4.5": "VG-EX+", "4": "VG-EX",
    "3.5": "VG+", "3": "VG", "2.5": "GOOD+", "2": "GOOD", "1.5": "FR", "1": "PR",
}
BGS_LABELS = {
    "10": "PRISTINE", "9.5": "GEM MINT", "9": "MINT", "8.5": "NM-MT+", "8": "NM-MT", "7": "NM",
}
CGC_CARD_LABELS = {
    "10": "Gem Mint", "9.5": "Mint+", "9": "Mint", "8.5": "NM/Mint+", "8": "NM/Mint",
    "7": "Near Mint",
}
CGC_COMIC_LABELS = {
    "9.8": "NM/M", "9.6": "NM+", "9.4": "NM", "9.2": "NM-", "9.0": "VF/NM", "8.5": "VF+",
    "8.0": "VF", "7.5": "VF-", "7.0": "FN/VF", "6.0": "FN", "5.0": "VG/FN", "4.0": "VG",
    "3.0": "GD/VG", "2.0": "GD",
}
SGC_LABELS = {
    "10": "GEM MINT", "9.5": "MINT+", "9": "MINT", "8": "NM/MT", "6": "EX/NM", "4": "VG/EX",
}
PAGE_QUALITY = ("White Pages", "Off-white to White Pages", "Off-white Pages", "Cream to Off-white")
RAW_CONDITIONS = (
    ("NM", "Near Mint"), ("NM", "Near Mint"), ("LP", "Lightly Played"), ("MP", "Moderately Played"),
    ("EX", "Excellent"),
)
PSA_QUALIFIERS = ("OC", "ST", "PD", "OF", "MK", "MC")
COMIC_RAW = (("VF/NM", "VF/NM 9.0"), ("NM", "NM 9.4"), ("VF", "VF 8.0"), ("FN", "FN 6.0"))
COIN_RAW = (("XF", "Extremely Fine"), ("AU", "About Uncirculated"), ("VF", "Very Fine"))
# fmt: on


@dataclass(frozen=True, slots=True)
class Grade:
    """How one copy is graded; ``grader=None`` is a raw copy whose ``grade`` is its condition."""

    grader: str | None
    grade: str
    """``10``, ``9.5``, ``9.8``, ``MS65`` (Sheldon with prefix), or a raw condition (``NM``)."""
    label: str
    """What the label (or a raw listing) says: ``GEM MT``, ``NM/M``, ``Near Mint``."""
    cert: str | None = None
    qualifier: str | None = None
    label_type: str | None = None
    subgrades: tuple[tuple[str, str], ...] = ()
    page_quality: str | None = None
    designation: str = ""
    """Coins: ``RD``, ``DMPL``, ``DCAM``, ``FB`` … (shown after the grade: ``MS65RD``)."""

    @property
    def graded(self) -> bool:
        return self.grader is not None

    @property
    def phrase(self) -> str:
        """How titles name the grade: ``PSA 10 GEM MINT``, ``BGS 9.5``, ``PCGS MS65RD``."""
        if self.grader is None:
            return self.label
        if self.grader == "PSA":
            label = "GEM MINT" if self.grade == "10" else self.label
            qualifier = f" ({self.qualifier})" if self.qualifier else ""
            return f"PSA {self.grade} {label}{qualifier}"
        if self.grader == "PCGS":
            return f"PCGS {self.grade}{self.designation}"
        if self.grader == "NGC":
            return f"NGC {self.grade} {self.designation}".rstrip()
        return f"{self.grader} {self.grade}"

    @property
    def numeric(self) -> float:
        """The grade as a number on a 10-point scale (Sheldon / 7; raw conditions guessed)."""
        digits = "".join(ch for ch in self.grade if ch.isdigit() or ch == ".")
        if not digits:
            return {"NM": 7.0, "EX": 5.0, "LP": 5.5, "MP": 4.0, "VF/NM": 9.0, "AU": 7.5}.get(
                self.grade, 6.0
            )
        value = float(digits)
        return value / 7 if value > 10 else value


def normalize_cert(cert: str) -> str:
    """A cert without its dash: the key graders' lookups agree on."""
    return cert.replace("-", "").strip()


def grade_factor(item: Item, grade: Grade) -> float:
    """How much a grade multiplies the item's raw near-mint value."""
    n = grade.numeric
    if grade.grader is None:
        return {"NM": 1.0, "Near Mint": 1.0, "LP": 0.7, "MP": 0.5, "EX": 0.6}.get(grade.grade, 0.8)
    if item.category == "coin":
        sheldon = n * 7
        return max(0.3, math.pow(1.6, (sheldon - 60) / 1.5)) if sheldon >= 60 else 0.5 + n / 20
    vintage = item.year < 1980
    top = {10.0: 7.0 if not vintage else 60.0, 9.8: 4.0, 9.6: 2.5, 9.5: 4.0, 9.0: 2.0}
    if n in top:
        return top[n] * (1.3 if grade.grader == "BGS" and n >= 9.5 else 1.0)
    return max(0.15, 0.25 * math.pow(1.4, n - 4)) * (3.0 if vintage else 1.0)


class GradeMaker:
    """Draws grades and fresh, unique cert numbers for copies of items."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._certs: set[str] = set()

    def _unique(self, make: str) -> str:
        while True:
            cert = self._draw(make)
            if normalize_cert(cert) not in self._certs:
                self._certs.add(normalize_cert(cert))
                return cert

    def _draw(self, grader: str) -> str:
        r = self._rng
        if grader == "PSA":
            return str(
                r.randint(10_000_000, 99_999_999)
                if r.random() < 0.8
                else r.randint(10**8, 149_999_999)
            )
        if grader == "BGS":
            return f"00{r.randint(10_000_000, 19_999_999)}"
        if grader == "CGC-card":
            return f"{r.randint(4_000_000, 4_399_999)}-{r.randint(1, 40):03d}"
        if grader in ("CGC", "CGC-card-flat"):
            return f"{r.randint(3_700_000, 4_399_999)}{r.randint(1, 40):03d}"
        if grader == "SGC":
            return str(r.randint(1_000_000, 9_999_999))
        if grader == "PCGS":
            return f"{r.randint(10_000_000, 49_999_999)}"
        return f"{r.randint(1_000_000, 6_999_999)}-{r.randint(1, 30):03d}"  # NGC

    def raw(self, item: Item) -> Grade:
        r = self._rng
        if item.category == "comic":
            grade, label = r.choice(COMIC_RAW)
        elif item.category == "coin":
            grade, label = r.choice(COIN_RAW)
        else:
            grade, label = r.choice(RAW_CONDITIONS)
        return Grade(None, grade, label)

    def graded(self, item: Item) -> Grade:
        r = self._rng
        if item.category == "comic":
            return self._cgc_comic()
        if item.category == "coin":
            return self._coin(item)
        vintage = item.year < 1980
        grader = r.choices(("PSA", "BGS", "CGC", "SGC"), (55, 5 if vintage else 18, 15, 12))[0]
        if grader == "PSA":
            return self._psa(vintage)
        if grader == "BGS":
            return self._bgs()
        scale = CGC_CARD_LABELS if grader == "CGC" else SGC_LABELS
        grade = r.choices(list(scale), (25, 30, 25, 10, 6, 4)[: len(scale)])[0]
        if grader == "SGC":
            return Grade("SGC", grade, scale[grade], self._unique("SGC"), label_type="Tuxedo")
        cert = self._unique("CGC-card" if r.random() < 0.3 else "CGC-card-flat")
        label = "Pristine" if grade == "10" and r.random() < 0.2 else scale[grade]
        return Grade(
            "CGC", grade, label, cert, label_type="Pristine" if label == "Pristine" else "Standard"
        )

    def _psa(self, vintage: bool) -> Grade:
        r = self._rng
        modern = (2, 3, 3, 4, 4, 6, 6, 8, 8, 10, 8, 14, 24, 30)
        weights = (6, 6, 8, 8, 10, 10, 12, 12, 10, 8, 6, 5, 3, 1) if vintage else modern
        scale = ("1", "1.5", "2", "3", "3.5", "4", "5", "5.5", "6", "7", "7.5", "8", "9", "10")
        grade = r.choices(scale, weights)[0]
        qualifier = (
            r.choice(PSA_QUALIFIERS) if grade not in ("9", "10") and r.random() < 0.06 else None
        )
        label_type = "Lighthouse" if r.random() < 0.4 else "Standard"
        return Grade("PSA", grade, PSA_LABELS[grade], self._unique("PSA"), qualifier, label_type)

    def _bgs(self) -> Grade:
        r = self._rng
        grade = r.choices(("10", "9.5", "9", "8.5", "8"), (6, 50, 28, 10, 6))[0]
        overall = float(grade)
        parts = ("Centering", "Corners", "Edges", "Surface")
        subs: tuple[str, ...] = ("10", "10", "10", "10")
        if grade != "10" or r.random() >= 0.3:
            low = max(1.0, overall - 0.5)
            picks = [min(10.0, overall + r.choice((0.0, 0.5, 0.5, 1.0))) for _ in parts]
            picks[r.randrange(4)] = low
            subs = tuple(f"{p:g}" for p in picks)
        black = subs == ("10", "10", "10", "10")
        label_type = "Black Label" if black else "Gold" if overall >= 9.5 else "Silver"
        return Grade(
            "BGS",
            grade,
            BGS_LABELS[grade],
            self._unique("BGS"),
            label_type=label_type,
            subgrades=tuple(zip(parts, subs, strict=True)),
        )

    def _cgc_comic(self) -> Grade:
        r = self._rng
        grades = list(CGC_COMIC_LABELS)
        grade = r.choices(grades, (30, 18, 12, 8, 7, 5, 5, 3, 3, 3, 2, 2, 1, 1))[0]
        label_type = r.choices(
            ("Universal", "Signature Series", "Qualified", "Restored"), (80, 12, 5, 3)
        )[0]
        return Grade(
            "CGC",
            grade,
            CGC_COMIC_LABELS[grade],
            self._unique("CGC"),
            label_type=label_type,
            page_quality=r.choice(PAGE_QUALITY),
        )

    def _coin(self, item: Item) -> Grade:
        r = self._rng
        grader = "PCGS" if r.random() < 0.55 else "NGC"
        designations = names.COIN_TYPES[item.set_name][6]
        if item.set_name == "American Silver Eagle" and item.mint_mark in ("S", "W"):
            prefix = "PR" if grader == "PCGS" else "PF"
            number = r.choice((69, 69, 70, 68))
            designation = "DCAM" if grader == "PCGS" else "Ultra Cameo"
        else:
            prefix = r.choices(("MS", "AU", "XF", "VF"), (70, 15, 10, 5))[0]
            number = {
                "MS": r.randint(60, 67),
                "AU": r.choice((50, 53, 55, 58)),
                "XF": r.choice((40, 45)),
                "VF": r.choice((20, 25, 30, 35)),
            }[prefix]
            designation = r.choice(designations) if prefix == "MS" else ""
            designation = "" if designation == "DCAM" else designation
        plus = "+" if prefix == "MS" and 64 <= number <= 67 and r.random() < 0.1 else ""
        grade = f"{prefix}{number}{plus}"
        gold = grader == "PCGS" and r.random() < 0.5
        return Grade(
            grader,
            grade,
            f"{grade} {designation}".rstrip(),
            self._unique(grader),
            label_type="Gold Shield" if gold else "Standard",
            designation=designation,
        )
