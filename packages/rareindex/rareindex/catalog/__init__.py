"""Catalog sources: the layouts ``rareindex catalog import`` reads into catalog items."""

from .pokemon_tcg import is_pokemon_tcg, read_pokemon_tcg

__all__ = ["is_pokemon_tcg", "read_pokemon_tcg"]
