"""SSRF policy: where a URL that came from outside may make us connect.

Every hop (redirects included) is resolved and each address is checked; private, loopback,
link-local, multicast, reserved, unspecified and cloud-metadata addresses are refused unless the
host's policy sets ``allow_private_network`` (the tests' fake web is allowed that way, by
configuration, not by a hole in the check). The caller then connects to the address that was
checked, so a second DNS answer cannot rebind the host between check and connect.

A name that does not resolve (no such name, no address, or no answer within ``timeout_s``) is a
:class:`DNSError`: transient, retried, reported as ``dns_error``. Only a name that *does* resolve
to a refused address is :class:`UnsafeURL`.

Example:
    >>> import asyncio
    >>> asyncio.run(SafeResolver().resolve("http://169.254.169.254/latest/", allow_private=False))
    Traceback (most recent call last):
    ...
    rareindex_connectors.errors.UnsafeURL: 169.254.169.254 is link-local (cloud...
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from .errors import DNSError, UnsafeURL

__all__ = ["Resolver", "SafeResolver", "SystemResolver", "Target", "address_problem"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_METADATA = {
    ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack
    ipaddress.ip_address("169.254.170.2"),  # AWS ECS task metadata
    ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
    ipaddress.ip_address("fd00:ec2::254"),  # AWS IPv6 metadata
}


_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
"""NAT64 prefixes (RFC 6052, RFC 8215): the last 32 bits are the IPv4 address reached."""


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form reaches: IPv4-mapped (``::ffff:a.b.c.d``), 6to4
    (``2002:AABB:CCDD::``), NAT64 (``64:ff9b::a.b.c.d``) or the client of a Teredo address.

    >>> embedded_ipv4(ipaddress.IPv6Address("2002:a9fe:a9fe::"))
    IPv4Address('169.254.169.254')
    >>> embedded_ipv4(ipaddress.IPv6Address("64:ff9b::10.0.0.1"))
    IPv4Address('10.0.0.1')
    """
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if any(address in prefix for prefix in _NAT64):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_problem(address: IPAddress) -> str | None:
    """Why connecting to ``address`` is unsafe, or None when it is a public address. An IPv6
    address that reaches an IPv4 one (mapped, 6to4, NAT64, Teredo) is judged by that address."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = embedded_ipv4(address)
        if inner is not None:
            return address_problem(inner)
    if address in _METADATA:
        return "link-local (cloud metadata)" if address.is_link_local else "cloud metadata"
    checks = (
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
        ("not globally routable", not address.is_global),
    )
    return next((name for name, hit in checks if hit), None)


class Resolver(Protocol):
    """Host name -> addresses."""

    async def addresses(self, host: str, port: int) -> list[str]: ...


class SystemResolver:
    """The operating system's resolver (``getaddrinfo``), off the event loop."""

    async def addresses(self, host: str, port: int) -> list[str]:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True, slots=True)
class Target:
    """A checked destination: connect to ``address``, send ``Host: host``."""

    scheme: str
    host: str
    port: int
    address: str


class SafeResolver:
    """Resolves and checks hosts, caching answers for ``ttl_s`` (the checked address is reused,
    so caching cannot open a rebinding window).

    ``static`` maps host names to ``"address"`` or ``"address:port"`` ahead of DNS, like curl's
    ``--connect-to``: ``{"cards-shop.fake.test": "127.0.0.1:8765"}`` sends requests for that
    host to the local fake web while URLs, ``Host`` headers, policies and gates keep the name.
    The address is still checked like any other."""

    def __init__(
        self,
        resolver: Resolver | None = None,
        *,
        static: Mapping[str, str] | None = None,
        ttl_s: float = 60.0,
        timeout_s: float = 10.0,
    ):
        self._resolver = resolver or SystemResolver()
        self._static = {k.lower(): _split_address(v) for k, v in (static or {}).items()}
        self._ttl = ttl_s
        self._timeout = timeout_s
        self._cache: dict[tuple[str, int], tuple[float, list[str]]] = {}
        self._checked: dict[tuple[str, str, int, bool], tuple[float, Target]] = {}

    async def resolve(self, url: str, *, allow_private: bool) -> Target:
        """Check ``url``'s host and return where to connect.

        Raises:
            UnsafeURL: not http(s), no host, or an address the policy refuses.
            DNSError: the name does not resolve, or the resolver did not answer in time.
        """
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in {"http", "https"}:
            raise UnsafeURL(f"scheme {scheme or '(none)'!r} is not http or https", url=url)
        host = (parts.hostname or "").lower()
        if not host:
            raise UnsafeURL("the URL has no host", url=url)
        port = parts.port or (443 if scheme == "https" else 80)
        static_port = self._static[host][1] if host in self._static else None
        if static_port is not None:
            port = static_port  # connect-to: the name stays, the port moves
        key = (scheme, host, port, allow_private)
        checked = self._checked.get(key)
        if checked is not None and checked[0] > time.monotonic():
            return checked[1]  # the same answer, already checked: the hot path of a crawl
        candidates = await self._lookup(host, port, url)
        for candidate in candidates:
            problem = address_problem(ipaddress.ip_address(candidate))
            if problem and not allow_private:
                raise UnsafeURL(
                    f"{candidate} is {problem}; refused for {host} (allow it in the host's policy "
                    "with allow_private_network only for test networks)",
                    url=url,
                    host=host,
                )
        target = Target(scheme, host, port, candidates[0])
        self._checked[key] = (time.monotonic() + self._ttl, target)
        return target

    async def _lookup(self, host: str, port: int, url: str) -> list[str]:
        try:
            return [str(ipaddress.ip_address(host.strip("[]")))]
        except ValueError:
            pass
        if host in self._static:
            return [self._static[host][0]]
        key = (host, port)
        cached = self._cache.get(key)
        now = time.monotonic()
        if cached and cached[0] > now:
            return cached[1]
        try:
            found = await asyncio.wait_for(self._resolver.addresses(host, port), self._timeout)
        except TimeoutError:
            raise DNSError(
                f"cannot resolve {host}: no answer within {self._timeout:g} s", url=url, host=host
            ) from None
        except UnicodeError as exc:  # an empty or over-long label: no name to look up, ever
            raise UnsafeURL(f"{host!r} is not a host name: {exc}", url=url, host=host) from None
        except OSError as exc:  # socket.gaierror: NXDOMAIN, SERVFAIL, no resolver reachable
            raise DNSError(f"cannot resolve {host}: {exc}", url=url, host=host) from None
        if not found:
            raise DNSError(f"{host} resolves to no address", url=url, host=host)
        self._cache[key] = (now + self._ttl, found)
        return found


def _split_address(value: str) -> tuple[str, int | None]:
    """``"127.0.0.1"``, ``"127.0.0.1:8080"``, ``"::1"`` or ``"[::1]:8080"`` -> (address, port)."""
    value = value.strip()
    if value.startswith("["):
        address, _, rest = value[1:].partition("]")
        port = rest.removeprefix(":")
    elif value.count(":") == 1:
        address, port = value.split(":")
    else:
        address, port = value, ""
    str(ipaddress.ip_address(address))  # validates: ValueError for anything but an IP
    return address, int(port) if port else None
