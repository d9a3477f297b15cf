"""The connector registry: every connector found under ``connectors/``, validated at load time.

A **code connector** is ``connectors/<engine>/<slug>.py`` exposing a module-level ``connector``
object that implements :class:`rareindex_connectors.Connector`. A **config-only connector** is
``connectors/<kind>/<slug>.toml`` (or ``.json``) handled by a registered kind (Shopify and
WooCommerce arrive with the adapters). One slug names the file, the registry key and the
``domains.d/<slug>.json`` policy; a mismatch is a load error, as are duplicate slugs.

A broken file does not stop the others from loading: its problem is kept in
:attr:`Registry.problems` (file, field, valid values) and reported by the CLI.

Example:
    >>> registry = load_registry(REPO_ROOT / "connectors")       # doctest: +SKIP
    >>> [c.meta.id for c in registry]                            # doctest: +SKIP
    ['demo-cards', ...]
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import re
import sys
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rareindex_adapters.stores import CONFIG_KINDS as STORE_KINDS
from rareindex_adapters.stores import StoreConfig
from rareindex_connectors import Connector, ConnectorMeta
from rareindex_connectors.errors import ConnectorError

from .errors import ConfigError

__all__ = ["CONFIG_KINDS", "Problem", "Registry", "load_registry"]

ConfigFactory = Callable[[Mapping[str, Any], Path], Connector]


def _store_factory(cls: Any) -> ConfigFactory:
    def build(data: Mapping[str, Any], path: Path) -> Connector:
        return cls.from_config(data, slug=path.stem)  # type: ignore[no-any-return]

    return build


CONFIG_KINDS: dict[str, ConfigFactory] = {
    kind: _store_factory(cls) for kind, cls in STORE_KINDS.items()
}
"""Config-only connector kinds: folder name (``shopify``) -> factory from the parsed file."""

_SKIP_DIRS = {"domains.d", "__pycache__"}


@dataclass(frozen=True, slots=True)
class Problem:
    """A connector file that could not be loaded, and why (one line)."""

    path: Path
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass(slots=True)
class Registry:
    """Connectors by slug, in a stable (sorted) order, and the files that failed to load."""

    connectors: dict[str, Connector] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def raise_for_problems(self) -> None:
        """Raise the first problem as a :class:`ConfigError` (for callers that need all)."""
        if self.problems:
            raise ConfigError(self.problems[0].message)

    def __iter__(self) -> Iterator[Connector]:
        return iter(self.connectors[k] for k in sorted(self.connectors))

    def __len__(self) -> int:
        return len(self.connectors)

    def get(self, slug: str) -> Connector:
        """The connector ``slug``; :class:`ConfigError` with its file's problem when that file
        failed to load, or listing the known slugs when there is no such file."""
        try:
            return self.connectors[slug]
        except KeyError:
            for problem in self.problems:
                if problem.path.stem == slug:
                    raise ConfigError(problem.message) from None
            known = ", ".join(sorted(self.connectors)) or "(none)"
            raise ConfigError(f"no connector {slug!r}; known connectors: {known}") from None

    def add(self, connector: Connector, path: Path) -> None:
        slug = connector.meta.id
        if slug != path.stem:
            raise ConfigError(
                f"{path}: connector id {slug!r} must equal the file name {path.stem!r} "
                "(one slug names the file, the registry key and the domains.d policy)"
            )
        if slug in self.connectors:
            raise ConfigError(
                f"{path}: duplicate connector id {slug!r}, also in {self.files[slug]}"
            )
        self.connectors[slug] = connector
        self.files[slug] = path


def load_registry(root: Path) -> Registry:
    """Load every connector under ``root``. A broken file becomes a :class:`Problem` and the
    others still load; a missing directory is a :class:`ConfigError`."""
    if not root.is_dir():
        raise ConfigError(f"connectors directory {root} does not exist; set RI_CONNECTORS_DIR")
    registry = Registry()
    for path in sorted(root.rglob("*")):
        if not path.is_file() or _SKIP_DIRS & set(path.relative_to(root).parts):
            continue
        if path.parent == root or path.name.startswith(("_", ".")):
            continue  # domains.json and private helpers
        if path.suffix not in {".py", ".toml", ".json"}:
            continue
        try:
            if path.suffix == ".py":
                registry.add(_load_code_connector(path), path)
            else:
                registry.add(_load_config_connector(path, root), path)
        except ConfigError as exc:
            registry.problems.append(Problem(path, str(exc)))
    return registry


def _load_code_connector(path: Path) -> Connector:
    module_name = f"rareindex_connector_{path.stem.replace('-', '_')}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except (ConnectorError, ValidationError) as exc:
        sys.modules.pop(module_name, None)
        raise ConfigError(f"{path}: {_first_line(exc)}") from None
    except Exception as exc:  # a broken module must not take the registry down with it
        sys.modules.pop(module_name, None)
        raise ConfigError(f"{path}: {type(exc).__name__}: {_first_line(exc)}") from None
    connector = getattr(module, "connector", None)
    if connector is None:
        raise ConfigError(f"{path}: define a module-level `connector = YourConnector()`")
    _check_contract(connector, path)
    return connector  # type: ignore[no-any-return]


def _load_config_connector(path: Path, root: Path) -> Connector:
    kind = path.relative_to(root).parts[0]
    factory = CONFIG_KINDS.get(kind)
    if factory is None:
        installed = ", ".join(sorted(CONFIG_KINDS)) or "(none installed yet)"
        raise ConfigError(
            f"{path}: no config-only connector kind {kind!r}; installed kinds: {installed}"
        )
    try:
        data = (
            tomllib.loads(path.read_text())
            if path.suffix == ".toml"
            else json.loads(path.read_text())
        )
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not valid {path.suffix[1:].upper()}: {exc}") from None
    try:
        connector = factory(data, path)
    except (ConnectorError, ValidationError, ValueError) as exc:
        line = _line_of(exc, path) if isinstance(exc, ValidationError) else None
        raise ConfigError(f"{path}{f':{line}' if line else ''}: {_first_line(exc)}") from None
    _check_contract(connector, path)
    return connector


def _check_contract(connector: object, path: Path) -> None:
    if not isinstance(connector, Connector):
        missing = [
            name
            for name in (
                "meta",
                "version",
                "parser_version",
                "crawl",
                "normalize",
                "health_check",
                "lookup",
            )
            if not hasattr(connector, name)
        ]
        raise ConfigError(f"{path}: not a Connector; missing {', '.join(missing)}")


def _line_of(exc: ValidationError, path: Path) -> int | None:
    """The line of the file where the first invalid top-level key is written, if it is."""
    key = next((str(e["loc"][0]) for e in exc.errors() if e["loc"]), None)
    if key is None:
        return None
    quoted = f'"?{re.escape(key)}"?'
    toml = rf"^\s*(?:{quoted}\s*=|\[{quoted}\])"
    pattern = toml if path.suffix == ".toml" else rf'"{re.escape(key)}"\s*:'
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        if re.search(pattern, text):
            return number
    return None


def _first_line(exc: Exception) -> str:
    """One line for the user: every validation problem, with a guess for a misspelt key."""
    if not isinstance(exc, ValidationError):
        return str(exc).splitlines()[0]
    errors = exc.errors(include_url=False)
    missing = [str(e["loc"][-1]) for e in errors if e["type"] == "missing" and e["loc"]]
    known = [*missing, *StoreConfig.model_fields, *ConnectorMeta.model_fields]
    parts = []
    for error in errors[:5]:
        where = ".".join(str(p) for p in error["loc"])
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            guess = difflib.get_close_matches(str(error["loc"][-1]), known, n=1)
            model = StoreConfig if exc.title == StoreConfig.__name__ else ConnectorMeta
            valid = f"; valid keys: {', '.join(model.model_fields)}"
            message = f"unknown key{f' (did you mean {guess[0]!r}?)' if guess else valid}"
        parts.append(f"{where}: {message}")
    return f"{exc.title}: " + "; ".join(parts)
