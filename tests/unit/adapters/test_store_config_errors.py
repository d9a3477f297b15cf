"""Store config files: a market sub-folder in ``base_url`` is accepted, and every error states
the key's rule in words with an example, never a bare pattern."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from rareindex_adapters.stores import StoreConfig
from rareindex_adapters.stores.config import RULES

GOOD = {
    "source": "X",
    "base_url": "https://cards.example",
    "currency": "USD",
    "categories": ["coin"],
}


@pytest.mark.parametrize(
    ("given", "origin"),
    [
        ("https://cards.example", "https://cards.example"),
        ("https://cards.example/", "https://cards.example"),
        ("https://cards.example/en-eu", "https://cards.example/en-eu"),
        ("https://cards.example/en-eu/", "https://cards.example/en-eu"),
        ("http://cards.example:8080/shop/fr-ca", "http://cards.example:8080/shop/fr-ca"),
    ],
)
def test_base_url_may_carry_a_market_folder(given: str, origin: str) -> None:
    assert StoreConfig.model_validate({**GOOD, "base_url": given}).origin == origin


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("base_url", "cards.example", "is not an http:// or https:// address"),
        ("base_url", "ftp://cards.example", "is not an http:// or https:// address"),
        ("base_url", "https://cards.example/?page=1", "has a query or a fragment"),
        ("base_url", "https://cards.example/en-eu#top", "has a query or a fragment"),
        ("base_url", "https://cards.example/en eu", "spaces"),
        ("base_url", "https://u:p@cards.example", "user name"),
        ("base_url", "https://cards.example/en-eu/products.json", "points into the feed"),
        ("base_url", "https://cards.example/wp-json/wc/store/v1", "points into the feed"),
        ("source", "", "at least 1 character"),
        ("currency", "XXX", "is not an ISO-4217 currency"),
        ("categories", [], "at least 1 item"),
        ("categories", ["cards"], "Input should be"),
        ("refresh_class", "FAST", "Input should be"),
        ("engines", ["selenium"], "Input should be"),
        ("page_size", -1, "greater than or equal to 0"),
        ("page_size", "ten", "valid integer"),
        ("max_pages", 0, "greater than or equal to 1"),
        ("variations", "maybe", "valid boolean"),
        ("collections", "pokemon", "valid tuple"),
    ],
)
def test_every_error_states_the_rule_in_words_with_an_example(
    key: str, value: Any, why: str
) -> None:
    with pytest.raises(ValidationError) as excinfo:
        StoreConfig.model_validate({**GOOD, key: value})
    errors = excinfo.value.errors(include_url=False)
    assert any(why in error["msg"] for error in errors)
    for error in errors:
        assert str(error["loc"][0]) == key and f"; {key} is {RULES[key]}" in error["msg"]
        assert "e.g. " in error["msg"] and "pattern" not in error["msg"]


def test_a_missing_key_says_what_it_is_and_unknown_keys_keep_their_kind() -> None:
    with pytest.raises(ValidationError) as excinfo:
        StoreConfig.model_validate({"base_url": "https://x.example", "colections": []})
    errors = {str(e["loc"][0]): e for e in excinfo.value.errors(include_url=False)}
    assert errors["source"]["type"] == "missing"
    assert errors["source"]["msg"].startswith("Field required; source is the shop's name")
    assert errors["colections"]["type"] == "extra_forbidden"  # the registry suggests a key


def test_every_key_has_a_rule_with_an_example() -> None:
    assert set(RULES) == set(StoreConfig.model_fields)
    assert all("e.g. " in rule for rule in RULES.values())


def test_an_id_that_is_not_the_file_name_says_how_to_fix_it() -> None:
    config = StoreConfig.model_validate({**GOOD, "id": "other"})
    with pytest.raises(ValueError, match='leave it out, or write id = "cards"'):
        config.meta("cards", platform="shopify")
