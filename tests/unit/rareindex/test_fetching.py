"""The fetch stack follows the mode: gates in-process or in Redis, paid engines only with keys."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rareindex.fetching import build_fetch_stack
from rareindex.settings import Settings
from rareindex_connectors._gates.filelock import FileGateBackend
from rareindex_connectors.runtime import RedisGateBackend


def settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def test_embedded_gates_shared_by_lock_files_and_skips_paid_engines_without_keys(
    tmp_path: Path,
) -> None:
    stack = build_fetch_stack(settings(data_dir=tmp_path))
    assert isinstance(stack.gates.backend, FileGateBackend)  # shared by the machine's processes
    assert stack.gates.backend.directory == tmp_path.resolve() / "data" / "gates"
    reasons = {name: e.unavailable_reason() for name, e in stack.router.engines.items()}
    assert reasons == {
        "api": None,
        "firecrawl": "RI_FIRECRAWL_API_KEY is not set",
        "scrapfly": "RI_SCRAPFLY_API_KEY is not set",
    }
    assert stack.policies.for_host("www.example.com").user_agent == "bot"
    asyncio.run(stack.aclose())


def test_fleet_shares_gates_through_redis_and_paid_engines_run_with_keys() -> None:
    stack = build_fetch_stack(
        settings(
            database_url="postgresql+psycopg://h/db",
            broker_url="redis://127.0.0.1:6379/3",
            firecrawl_api_key="fc-secret",
            scrapfly_api_key="scp-secret",
            firecrawl_credit_budget=50,
            scrapfly_credit_budget=100,
        )
    )
    assert isinstance(stack.gates.backend, RedisGateBackend)
    assert all(e.unavailable_reason() is None for e in stack.router.engines.values())
    assert stack.router.credits_left == {"firecrawl": 50, "scrapfly": 100}
    asyncio.run(stack.aclose())


def test_a_policy_override_file_is_applied(tmp_path: Path) -> None:
    override = tmp_path / "local.json"
    override.write_text('{"domains": {"example.com": {"concurrency": 1}}}')
    stack = build_fetch_stack(settings(policy_override=override))
    assert stack.policies.for_host("shop.example.com").concurrency == 1
    asyncio.run(stack.aclose())
