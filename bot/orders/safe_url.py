"""Where a webhook may point: an ``https://`` URL whose host resolves only to public addresses.

A webhook URL comes from a workspace's settings, so it is user input that makes the function send
requests: server-side request forgery unless it is checked. :func:`url_problem` is the check made
when the URL is saved and :func:`resolve_public` the one made at send time, every time (DNS can
change in between); the sender then connects to the address it checked, never resolving the
name again (so a DNS answer that changes between the check and the connection, DNS rebinding,
cannot move it), while TLS still verifies the certificate for the name.

Refused:

- anything but ``https``; a URL with user info (``https://user:pass@host``), no host, or a
  fragment; a port outside 1-65535;
- a host that resolves to any address that is not globally routable: loopback (127.0.0.0/8,
  ::1), private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10:
  the cloud metadata endpoints 169.254.169.254 and fd00:ec2::254 are there and in fc00::/7),
  carrier-grade NAT (100.64/10), unspecified, multicast, reserved, and IPv4-mapped or NAT64
  forms of any of those (``ipaddress``'s ``is_global``, checked on the mapped address too).

Pinned hosts (``pinned``: host → (address, port), like ``curl --resolve``) skip the address
check: the deployer sets them (``ORDER_WEBHOOK_PINNED_HOSTS``, for the sandbox and the tests,
whose receiver listens on 127.0.0.1); a URL typed in the settings can never pin anything.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

Resolver = Callable[[str, int], list[str]]
MAX_URL = 2000


@dataclass(frozen=True)
class Target:
    """Where a checked URL's request goes: the name TLS verifies, the address connected to."""

    host: str
    address: str
    port: int
    path: str  # with its query


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (A and AAAA)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def address_problem(text: str) -> str | None:
    """Why the address ``text`` may not be called, or None for a public one."""
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return "an address that is not an IP address"
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None and not mapped.is_global:
            return "an internal address"
    if not address.is_global or address.is_multicast:
        return "an internal address (loopback, private, link-local or reserved)"
    return None


def _parts(url: str) -> tuple[str, int, str] | str:
    """(host, port, path) of an acceptable URL, or why it is not."""
    if not isinstance(url, str) or len(url) > MAX_URL:
        return f"a URL of at most {MAX_URL} characters"
    try:
        parts = urlsplit(url.strip())
        port = parts.port or 443
    except ValueError:
        return "not a URL"
    if parts.scheme != "https":
        return "an https:// URL"
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return "a URL without a user name or password in it"
    if not parts.hostname or parts.fragment:
        return "a URL with a host and no #fragment"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.hostname.rstrip(".").lower(), port, path


def url_problem(
    url: str,
    resolver: Resolver = system_resolver,
    pinned: Mapping[str, tuple[str, int]] | None = None,
) -> str | None:
    """Why ``url`` may not be a webhook ("must be …"), or None. Resolves its host."""
    found = resolve_public(url, resolver, pinned)
    return found if isinstance(found, str) else None


def resolve_public(
    url: str,
    resolver: Resolver = system_resolver,
    pinned: Mapping[str, tuple[str, int]] | None = None,
) -> Target | str:
    """The :class:`Target` to connect to for ``url``, or why it may not be called."""
    parts = _parts(url)
    if isinstance(parts, str):
        return f"must be {parts}"
    host, port, path = parts
    if pinned and host in pinned:
        address, pinned_port = pinned[host]
        return Target(host, address, pinned_port, path)
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        literal = None
    try:
        addresses = [str(literal)] if literal is not None else resolver(host, port)
    except OSError:
        return "must be a host name that resolves"
    if not addresses:
        return "must be a host name that resolves"
    for address in addresses:
        problem = address_problem(address)
        if problem is not None:
            return f"must not point at {problem}"
    return Target(host, addresses[0], port, path)
