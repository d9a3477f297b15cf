"""The loopback-only guard, loaded at start-up by every Python process an exercise starts with
this directory on ``PYTHONPATH`` (and installed in the test process by the ``loopback_only``
fixture): a TCP connection to anything but a loopback address is refused before it is made.

The SSRF exercise is also run with the SSRF policy removed, to prove it fails then; this guard
keeps that run on 127.0.0.1 too — a refused vector must never become a packet on a real network.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def _check(address: Any) -> None:
    if not isinstance(address, tuple):
        return  # a Unix socket
    host = str(address[0]).split("%")[0]
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        raise ConnectionRefusedError(f"loopback-only guard: {host!r} is not an address") from None
    mapped = getattr(ip, "ipv4_mapped", None)
    if not (ip.is_loopback or (mapped is not None and mapped.is_loopback)):
        raise ConnectionRefusedError(f"loopback-only guard: refused a connection to {host}")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(address)
    _connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(address)
    return _connect_ex(self, address)


def install() -> None:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign,assignment]


def uninstall() -> None:
    socket.socket.connect = _connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign]


install()
