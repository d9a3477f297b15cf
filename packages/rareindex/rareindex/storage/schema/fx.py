"""Exchange rates and the multi-currency views over sales and listings.

``fx_rates`` stores, per day, how many units of a currency one US dollar buys (``per_usd``). The
views price each sale or listing in USD, CAD, EUR, GBP and JPY at the latest rate on or before the
sale (or last-seen) date, so weekends and holidays use Friday's rate. A missing rate gives NULL,
never a guess, and ``fx_missing_reason`` says why.

The arithmetic is exact on both databases: ``ri_fx_convert(price, from_per_usd, to_per_usd,
minor)`` is ``price * to / from`` rounded half to even to ``minor`` decimal places. PostgreSQL
runs it as a SQL function (created by migration 0010), SQLite as the Python function
:func:`exact_convert`, which :mod:`rareindex.storage.engine` registers on every connection. The
views are written once per dialect because SQLite has no ``::date`` and PostgreSQL has no
``date()`` on timestamptz.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Context, Decimal

from sqlalchemy import (
    CheckConstraint,
    Column,
    Date,
    Index,
    Integer,
    PrimaryKeyConstraint,
    Table,
    Text,
)

from ..types import ExactDecimal
from ._base import metadata

__all__ = [
    "DEFAULT_STALE_DAYS",
    "FX_MISSING_REASONS",
    "PG_FX_CONVERT",
    "VIEW_CURRENCIES",
    "exact_convert",
    "fx_rates",
    "fx_settings",
    "multi_currency_view_sql",
    "multi_currency_view_sql_0001",
    "multi_currency_view_sql_0010",
    "sqlite_exact_convert_sql",
    "sqlite_exact_layers",
]

VIEW_CURRENCIES = ("USD", "CAD", "EUR", "GBP", "JPY")
_MINOR = {"USD": 2, "CAD": 2, "EUR": 2, "GBP": 2, "JPY": 0}

FX_MISSING_REASONS = {
    "no_ecb_rate": "the ECB publishes no rate for this currency (none is loaded)",
    "no_rate_on_date": "no rate loaded on or before the date (before 1999, or not loaded yet)",
}
"""``fx_missing_reason`` in the views -> what it means. NULL there: the row converted."""

fx_rates = Table(
    "fx_rates",
    metadata,
    Column("rate_date", Date, nullable=False),
    Column("currency", Text, nullable=False),
    Column("per_usd", ExactDecimal(), nullable=False, comment="units of currency per 1 USD"),
    Column("source", Text, nullable=False, server_default="ecb"),
    PrimaryKeyConstraint("rate_date", "currency"),
    # The views look up "the last rate of C on or before D" (and "any rate of C"): by currency.
    Index("ix_fx_rates_currency_date", "currency", "rate_date"),
)

# The quotient is kept to 40 places (PostgreSQL divides a scale-40 dividend to 40 places, half
# away from zero), then rounded half to even to the minor unit: the same steps in both databases.
_QUOTIENT = Decimal(1).scaleb(-40)
_CONTEXT = Context(prec=100)

PG_FX_CONVERT = """\
CREATE FUNCTION ri_fx_convert(price numeric, from_rate numeric, to_rate numeric, minor integer)
RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT round(CASE
    WHEN abs(y - trunc(y)) = 0.5 THEN trunc(y) + mod(trunc(y), 2)
    ELSE round(y)
  END / power(10::numeric, minor), minor)
  FROM (
    SELECT round(CAST(price * to_rate AS numeric(1000, 40)) / from_rate, 40)
      * power(10::numeric, minor) AS y
  ) q
$$"""
"""``ri_fx_convert`` on PostgreSQL; NULL in, NULL out (as :func:`exact_convert`)."""


def exact_convert(price: object, from_rate: object, to_rate: object, minor: int) -> str | None:
    """``price * to_rate / from_rate`` exactly, rounded half to even to ``minor`` places, as text.

    The SQLite side of ``ri_fx_convert`` (SQLite stores these decimals as text); None when an
    argument is NULL. ``exact_convert("100.00", "0.787", "156.9", 0)`` is ``'19937'``.
    """
    if price is None or from_rate is None or to_rate is None:
        return None
    value = _CONTEXT.divide(
        _CONTEXT.multiply(Decimal(str(price)), Decimal(str(to_rate))), Decimal(str(from_rate))
    )
    value = value.quantize(_QUOTIENT, rounding=ROUND_HALF_UP, context=_CONTEXT)
    rounded = value.quantize(Decimal(1).scaleb(-minor), rounding=ROUND_HALF_EVEN, context=_CONTEXT)
    return format(rounded, "f")


def _lookup(what: str, currency_sql: str, day_sql: str) -> str:
    # Only our own column names and literals are interpolated here, never user input.
    return (
        f"(SELECT r.{what} FROM fx_rates r WHERE r.currency = {currency_sql} "  # noqa: S608
        f"AND r.rate_date <= {day_sql} ORDER BY r.rate_date DESC LIMIT 1)"
    )


def multi_currency_view_sql_0010(dialect: str) -> dict[str, str]:
    """The views as migration 0010 created them (``ri_fx_convert`` on both databases, no
    ``fx_stale``), frozen for 0010 and for the downgrade of 0015. Never change it."""
    sqlite = dialect == "sqlite"

    def day(column: str) -> str:
        return f"date({column})" if sqlite else f"CAST({column} AT TIME ZONE 'UTC' AS date)"

    def age(later: str, earlier: str) -> str:
        if sqlite:
            return f"CAST(julianday({later}) - julianday({earlier}) AS INTEGER)"
        return f"({later} - {earlier})"

    def view(name: str, table: str, columns: list[str], date_column: str) -> str:
        d, euro = day(f"t.{date_column}"), "'EUR'"
        targets = [c for c in VIEW_CURRENCIES if c != "USD"]
        inner = ",\n    ".join(
            [
                *(f"t.{c}" for c in columns),
                f"{d} AS fx_day",
                f"CASE WHEN t.currency = 'USD' THEN 1 ELSE {_lookup('per_usd', 't.currency', d)} "
                "END AS from_rate",
                f"CASE WHEN t.currency = 'USD' THEN {_lookup('rate_date', euro, d)} "
                f"ELSE {_lookup('rate_date', 't.currency', d)} END AS from_date",
                *(f"{_lookup('per_usd', repr(c), d)} AS rate_{c.lower()}" for c in targets),
            ]
        )
        rates = {"USD": "1", **{c: f"b.rate_{c.lower()}" for c in targets}}
        complete = " AND ".join(
            ["b.from_rate IS NOT NULL", *(f"{rates[c]} IS NOT NULL" for c in targets)]
        )
        outer = ",\n  ".join(
            [
                *(f"b.{c}" for c in columns),
                *(
                    f"ri_fx_convert(b.price, b.from_rate, {rates[c]}, {_MINOR[c]}) "
                    f"AS price_{c.lower()}"
                    for c in VIEW_CURRENCIES
                ),
                f"CASE WHEN {complete} THEN b.from_date END AS fx_rate_date",
                f"CASE WHEN {complete} THEN {age('b.fx_day', 'b.from_date')} END "
                "AS fx_rate_age_days",
                f"CASE WHEN {complete} THEN NULL "  # noqa: S608 - our own names only
                "WHEN b.currency <> 'USD' AND NOT EXISTS "
                "(SELECT 1 FROM fx_rates x WHERE x.currency = b.currency) THEN 'no_ecb_rate' "
                "ELSE 'no_rate_on_date' END AS fx_missing_reason",
            ]
        )
        return (
            f"CREATE VIEW {name} AS SELECT\n  {outer}\n"
            f"FROM (SELECT\n    {inner}\n  FROM {table} t) b"
        )

    common = ["id", "source_id", "asset_id", "variant_id"]
    return {
        "sales_multi_currency": view(
            "sales_multi_currency",
            "sales",
            ["id", "sale_date", *common[1:], "sale_type", "price", "currency"],
            "sale_date",
        ),
        "listings_multi_currency": view(
            "listings_multi_currency",
            "listings",
            ["id", "last_seen_at", *common[1:], "status", "price", "currency"],
            "last_seen_at",
        ),
    }


_CURRENCIES_0001 = ("USD", "CAD", "EUR", "GBP", "JPY")


def _rate_0001(currency_sql: str, day_sql: str, numeric: str) -> str:
    return (
        f"(CASE WHEN {currency_sql} = 'USD' THEN 1 ELSE (SELECT CAST(r.per_usd AS {numeric}) "  # noqa: S608
        f"FROM fx_rates r WHERE r.currency = {currency_sql} AND r.rate_date <= {day_sql} "
        "ORDER BY r.rate_date DESC LIMIT 1) END)"
    )


def multi_currency_view_sql_0001(dialect: str) -> dict[str, str]:
    """The views as migration 0001 created them (floating point on SQLite), frozen for 0001 and
    for the downgrade of 0010. Never change it: a migration must replay the same schema."""
    numeric = "REAL" if dialect == "sqlite" else "NUMERIC"

    def day(column: str) -> str:
        return (
            f"date({column})"
            if dialect == "sqlite"
            else f"CAST({column} AT TIME ZONE 'UTC' AS date)"
        )

    def view(name: str, table: str, columns: str, date_column: str) -> str:
        source_rate = _rate_0001("t.currency", day(f"t.{date_column}"), numeric)
        converted = ",\n  ".join(
            f"CAST(t.price AS {numeric}) / {source_rate} * "
            f"{_rate_0001(repr(c), day(f't.{date_column}'), numeric)} AS price_{c.lower()}"
            for c in _CURRENCIES_0001
        )
        return f"CREATE VIEW {name} AS SELECT\n  {columns},\n  {converted}\nFROM {table} t"

    return {
        "sales_multi_currency": view(
            "sales_multi_currency",
            "sales",
            "t.id, t.sale_date, t.source_id, t.asset_id, t.variant_id, t.sale_type, t.price, "
            "t.currency",
            "sale_date",
        ),
        "listings_multi_currency": view(
            "listings_multi_currency",
            "listings",
            "t.id, t.last_seen_at, t.source_id, t.asset_id, t.variant_id, t.status, t.price, "
            "t.currency",
            "last_seen_at",
        ),
    }


fx_settings = Table(
    "fx_settings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column(
        "stale_days",
        Integer,
        nullable=False,
        comment="a rate more than this many days older than the row it prices is fx_stale",
    ),
    CheckConstraint("id = 1", name="ck_fx_settings_one_row"),
    CheckConstraint("stale_days >= 0", name="ck_fx_settings_stale_days"),
)
"""One row (``id = 1``): the FX settings the views read. ``stale_days`` is written from
``RI_FX_STALE_DAYS`` when RareIndex opens or upgrades the database with it set, and by
``rareindex fx stale-days N`` (:mod:`rareindex.storage.fx_settings`)."""

DEFAULT_STALE_DAYS = 7
"""``fx_settings.stale_days`` as migration 0015 inserts it (``RI_FX_STALE_DAYS``'s default)."""

# --- exact conversion in plain SQLite SQL ---------------------------------------------------------
#
# SQLite has no decimal type, and a view that calls a function registered per connection cannot be
# read by the sqlite3 shell. So the SQLite views compute ``price * to / from`` in 64-bit integers:
# each decimal text becomes (digits, scale), the powers of ten move to the multiplier ``B`` or to a
# final division ``10^s``, and ``A * B / D`` (A: the price's digits, D: the from-rate's) is a long
# multiplication of A mod D by B in base 10^6 limbs, every partial product below 2·10^18. The
# quotient and remainder then round half to even to the minor unit, as ri_fx_convert does on
# PostgreSQL (the 40-place intermediate rounding there never decides: the quotient's denominator
# is far below 10^40, so it is at least 10^-30 away from a tie unless exactly on one).
#
# Exact for every price of at most 18 significant digits and every rate below 10^12 in its last
# decimal place (a per_usd below 10^6 at 6 decimals: every ECB rate is below 20,000). Outside
# that, or when the result passes 2^63 minor units, the column is NULL rather than inexact.

_POW10_DIGITS = "1" + "0" * 18


def _pow10(exponent: str) -> str:
    """10^exponent (0..18) as an INTEGER, without SQLite's optional math functions."""
    return f"CAST(substr('{_POW10_DIGITS}', 1, ({exponent}) + 1) AS INTEGER)"


def _stripped(value: str) -> str:
    """The decimal text of ``value`` without its sign and without trailing fractional zeros."""
    text_ = f"ltrim(CAST({value} AS TEXT), '+-')"
    return (
        f"CASE WHEN instr({text_}, '.') > 0 THEN rtrim(rtrim({text_}, '0'), '.') ELSE {text_} END"
    )


def sqlite_exact_layers(source: str, targets: dict[str, int]) -> str:
    """A SELECT over ``source`` (a subquery with ``price``, ``from_rate`` and ``rate_<c>`` for
    each target ``c``) adding ``x_price_<c>``: ``price * rate_<c> / from_rate`` rounded half to
    even to ``targets[c]`` decimals, as decimal text, in plain SQLite SQL (see the note above).
    Only our own column names are interpolated."""
    names = {c: c.lower() for c in targets}
    values = {"p": "price", "f": "from_rate", **{f"t{n}": f"rate_{n}" for n in names.values()}}

    def layer(inner: str, columns: list[str]) -> str:
        # OFFSET 0 keeps SQLite from flattening the layers into one expression, which would
        # repeat every reference to a lower column (and the rate lookups below) many times over:
        # each layer is computed once per row.
        return f"SELECT l.*, {', '.join(columns)} FROM ({inner} LIMIT -1 OFFSET 0) l"  # noqa: S608

    # 1: unsigned decimal text; 2: digits, scale, whether it fits.
    sql = layer(
        source,
        [
            "substr(ltrim(CAST(price AS TEXT)), 1, 1) = '-' AS x_neg",
            *(f"{_stripped(col)} AS x_u_{key}" for key, col in values.items()),
        ],
    )
    columns = []
    for key in values:
        u = f"x_u_{key}"
        digits = f"replace({u}, '.', '')"
        columns += [
            f"CAST({digits} AS INTEGER) AS x_i_{key}",
            f"CASE WHEN instr({u}, '.') > 0 THEN length({u}) - instr({u}, '.') ELSE 0 END "
            f"AS x_s_{key}",
            f"({digits} <> '' AND {digits} NOT GLOB '*[^0-9]*' "
            f"AND length(ltrim({digits}, '0')) <= 18) AS x_ok_{key}",
        ]
    sql = layer(sql, columns)
    # 3: E = minor + scale(from) - scale(price) - scale(to): 10^E multiplies B when E >= 0, else
    # 10^-E divides; as much of that division as keeps D below 10^12 goes into D.
    sql = layer(
        sql,
        [
            f"{minor} + x_s_f - x_s_p - x_s_t{names[c]} AS x_e_{names[c]}"
            for c, minor in targets.items()
        ],
    )
    columns = []
    for n in names.values():
        e, s = f"x_e_{n}", f"max(-x_e_{n}, 0)"
        fold = f"max(0, min({s}, 12 - length(CAST(x_i_f AS TEXT))))"
        columns += [
            f"CASE WHEN {e} BETWEEN 0 AND 18 THEN x_i_t{n} * {_pow10(e)} "
            f"WHEN {e} < 0 THEN x_i_t{n} END AS x_b_{n}",
            f"CASE WHEN {s} <= 30 THEN x_i_f * {_pow10(fold)} END AS x_d_{n}",
            f"{s} - {fold} AS x_sh_{n}",
        ]
    sql = layer(sql, columns)
    # 4: A = a·D + ar; A·B = a·B·D + ar·B, ar·B by the limbs of B (base 10^6, high limb first).
    columns = []
    for n in names.values():
        b, d = f"x_b_{n}", f"x_d_{n}"
        columns += [
            f"x_i_p / {d} AS x_a_{n}",
            f"x_i_p % {d} AS x_ar_{n}",
            f"(x_i_p % {d}) * ({b} / 1000000000000) / {d} AS x_q1_{n}",
            f"(x_i_p % {d}) * ({b} / 1000000000000) % {d} AS x_r1_{n}",
        ]
    sql = layer(sql, columns)
    for step, (limb, prev) in enumerate(
        [("(x_b_{n} / 1000000) % 1000000", "1"), ("x_b_{n} % 1000000", "2")], start=2
    ):
        columns = []
        for n in names.values():
            d, digit = f"x_d_{n}", f"({limb.format(n=n)})"
            partial = f"(x_r{prev}_{n} * 1000000 + x_ar_{n} * {digit})"
            columns += [
                f"x_q{prev}_{n} * 1000000 + {partial} / {d} AS x_q{step}_{n}",
                f"{partial} % {d} AS x_r{step}_{n}",
            ]
        sql = layer(sql, columns)
    # 5: q = floor(A·B/D) (an overflow turns it REAL: NULL below), r = A·B mod D.
    sql = layer(sql, [f"x_a_{n} * x_b_{n} + x_q3_{n} AS x_q_{n}" for n in names.values()])
    # 6: divide q by 10^sh and round half to even, from q mod 10^sh and r.
    columns = []
    for n in names.values():
        q, r, d, sh = f"x_q_{n}", f"x_r3_{n}", f"x_d_{n}", f"x_sh_{n}"
        whole, rest = f"({q} / {_pow10(sh)})", f"({q} % {_pow10(sh)})"
        half = f"(5 * {_pow10(f'{sh} - 1')})"
        up = (
            f"CASE WHEN {sh} = 0 THEN 2 * {r} > {d} "
            f"ELSE {rest} > {half} OR ({rest} = {half} AND {r} > 0) END"
        )
        tie = f"CASE WHEN {sh} = 0 THEN 2 * {r} = {d} ELSE {rest} = {half} AND {r} = 0 END"
        columns.append(
            f"{whole} + CASE WHEN {up} THEN 1 WHEN {tie} THEN {whole} % 2 ELSE 0 END AS x_m_{n}"
        )
    sql = layer(sql, columns)
    # 7: the decimal text, signed; NULL when an input does not fit or the arithmetic overflowed.
    columns = []
    for c, minor in targets.items():
        n = names[c]
        m = f"x_m_{n}"
        ok = (
            f"x_ok_p AND x_ok_f AND x_ok_t{n} AND x_i_f > 0 AND x_i_f < 1000000000000 "
            f"AND x_sh_{n} <= 18 AND typeof(x_b_{n}) = 'integer' AND x_b_{n} < 1000000000000000000 "
            f"AND typeof({m}) = 'integer' AND substr(ltrim(CAST(from_rate AS TEXT)), 1, 1) <> '-' "
            f"AND substr(ltrim(CAST(rate_{n} AS TEXT)), 1, 1) <> '-'"
        )
        sign = f"CASE WHEN x_neg AND {m} <> 0 THEN '-' ELSE '' END"
        digits = (
            f"printf('%d.%0{minor}d', {m} / {_pow10(str(minor))}, {m} % {_pow10(str(minor))})"
            if minor
            else f"CAST({m} AS TEXT)"
        )
        columns.append(f"CASE WHEN {ok} THEN {sign} || {digits} END AS x_price_{n}")
    return layer(sql, columns)


def sqlite_exact_convert_sql(minor: int) -> str:
    """``SELECT`` of one value: ``:price * :to_rate / :from_rate`` rounded half to even to
    ``minor`` places, in plain SQLite SQL (what the SQLite views compute): for tests and for
    reading a database without RareIndex."""
    source = "SELECT :price AS price, :from_rate AS from_rate, :to_rate AS rate_x"
    return f"SELECT x_price_x FROM ({sqlite_exact_layers(source, {'X': minor})})"  # noqa: S608


def multi_currency_view_sql(dialect: str) -> dict[str, str]:
    """``CREATE VIEW`` statements for ``sales_multi_currency`` and ``listings_multi_currency``.

    Columns: the row's own, ``price_usd`` … ``price_jpy`` (exact, rounded to each currency's
    minor unit), ``fx_rate_date`` (the ECB day of the rate of the row's currency; for USD, of the
    euro's), ``fx_rate_age_days`` (the row's day minus ``fx_rate_date``), ``fx_stale`` (that age
    is more than ``fx_settings.stale_days``) and ``fx_missing_reason`` (a key of
    :data:`FX_MISSING_REASONS`). PostgreSQL converts with ``ri_fx_convert``; SQLite in plain SQL
    (:func:`sqlite_exact_layers`), so the views read without RareIndex's connection.

    Since migration 0018 the views also carry ``quarantined`` (the review queue holds the row out
    of the index): a migration that creates them again passes these statements through
    :func:`rareindex.storage.schema.review.views_with_review`.
    """
    sqlite = dialect == "sqlite"

    def day(column: str) -> str:
        return f"date({column})" if sqlite else f"CAST({column} AT TIME ZONE 'UTC' AS date)"

    def age(later: str, earlier: str) -> str:
        if sqlite:
            return f"CAST(julianday({later}) - julianday({earlier}) AS INTEGER)"
        return f"({later} - {earlier})"

    stale_days = (
        "COALESCE((SELECT s.stale_days FROM fx_settings s WHERE s.id = 1), "  # noqa: S608
        f"{DEFAULT_STALE_DAYS})"
    )

    def view(name: str, table: str, columns: list[str], date_column: str) -> str:
        d, euro = day(f"t.{date_column}"), "'EUR'"
        targets = [c for c in VIEW_CURRENCIES if c != "USD"]
        one = "'1'" if sqlite else "1"
        inner = ",\n    ".join(
            [
                *(f"t.{c}" for c in columns),
                f"{d} AS fx_day",
                f"CASE WHEN t.currency = 'USD' THEN {one} "
                f"ELSE {_lookup('per_usd', 't.currency', d)} END AS from_rate",
                f"CASE WHEN t.currency = 'USD' THEN {_lookup('rate_date', euro, d)} "
                f"ELSE {_lookup('rate_date', 't.currency', d)} END AS from_date",
                f"{one} AS rate_usd",
                *(f"{_lookup('per_usd', repr(c), d)} AS rate_{c.lower()}" for c in targets),
            ]
        )
        source = f"SELECT\n    {inner}\n  FROM {table} t"
        if sqlite:
            source = sqlite_exact_layers(source, {c: _MINOR[c] for c in VIEW_CURRENCIES})
        complete = " AND ".join(
            ["b.from_rate IS NOT NULL", *(f"b.rate_{c.lower()} IS NOT NULL" for c in targets)]
        )
        rate_age = age("b.fx_day", "b.from_date")

        def converted(c: str) -> str:
            if sqlite:
                return f"b.x_price_{c.lower()}"
            return f"ri_fx_convert(b.price, b.from_rate, b.rate_{c.lower()}, {_MINOR[c]})"

        outer = ",\n  ".join(
            [
                *(f"b.{c}" for c in columns),
                *(f"{converted(c)} AS price_{c.lower()}" for c in VIEW_CURRENCIES),
                f"CASE WHEN {complete} THEN b.from_date END AS fx_rate_date",
                f"CASE WHEN {complete} THEN {rate_age} END AS fx_rate_age_days",
                f"CASE WHEN {complete} THEN {rate_age} > {stale_days} END AS fx_stale",
                f"CASE WHEN {complete} THEN NULL "  # noqa: S608 - our own names only
                "WHEN b.currency <> 'USD' AND NOT EXISTS "
                "(SELECT 1 FROM fx_rates x WHERE x.currency = b.currency) THEN 'no_ecb_rate' "
                "ELSE 'no_rate_on_date' END AS fx_missing_reason",
            ]
        )
        return f"CREATE VIEW {name} AS SELECT\n  {outer}\nFROM ({source}) b"

    common = ["source_id", "asset_id", "variant_id"]
    return {
        "sales_multi_currency": view(
            "sales_multi_currency",
            "sales",
            ["id", "sale_date", *common, "sale_type", "price", "currency"],
            "sale_date",
        ),
        "listings_multi_currency": view(
            "listings_multi_currency",
            "listings",
            ["id", "last_seen_at", *common, "status", "price", "currency"],
            "last_seen_at",
        ),
    }
