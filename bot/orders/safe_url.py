"""Where a webhook may point: an ``https://`` URL whose host resolves only to public addresses.

A webhook URL comes from a workspace's settings, so it is user input that makes the function send
requests: server-side request forgery unless it is checked. :func:`url_problem` is the check made
when the URL is saved and :func:`resolve_public` the one made at send time, every time (DNS can
change in between); the sender then connects to the address it checked, never resolving the
name again (so a DNS answer that changes between the check and the connection, DNS rebinding,
cannot move it), while TLS still verifies the certificate for the name.

Refused:

- anything but ``https``; a URL with user info (``https://user:pass@host``), no host, or a
  fragment; any port but 443 (a webhook on port 25 or 6379 is not a webhook, and the port is
  the one thing a URL could still aim at a service that is not HTTPS);
- a host that resolves to any address in :data:`NOT_PUBLIC`, IANA's special-purpose registries
  (for IPv4 and IPv6) written out as a table rather than trusted to ``ipaddress.is_global``:
  Python 3.11 calls NAT64 ``64:ff9b::/96``, IPv4-compatible ``::/96``, SIIT ``::ffff:0:0:0/96``,
  ``64:ff9b:1::/48`` and 6to4 ``2002::/16`` global, and each of them can carry
  169.254.169.254. Loopback, private, link-local (the metadata endpoints 169.254.169.254 and
  fd00:ec2::254), carrier-grade NAT, documentation, benchmarking, multicast and reserved ranges
  are all in it;
- an IPv6 address that carries an IPv4 one (:func:`embedded_ipv4`: IPv4-mapped, SIIT, NAT64
  ``64:ff9b::/96``, 6to4, both ends of Teredo) whose IPv4 address is not public by the same
  table: where the function has IPv6 egress through NAT64 (a dual-stack VPC with a NAT gateway)
  such an address reaches the IPv4 one. The local-use NAT64 prefix ``64:ff9b:1::/48`` and the
  deprecated IPv4-compatible ``::/96`` are refused whole (an operator's own translation, and a
  form nothing public uses).

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


def _networks(*cidrs: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(cidr) for cidr in cidrs)


# IANA IPv4 and IPv6 Special-Purpose Address Registries (every entry not "globally reachable",
# and the translation prefixes whose reachability is that of the IPv4 address they carry),
# plus multicast and the deprecated site-local range.
NOT_PUBLIC = _networks(
    # IPv4
    "0.0.0.0/8",  # "this network"
    "10.0.0.0/8",  # private
    "100.64.0.0/10",  # carrier-grade NAT
    "127.0.0.0/8",  # loopback
    "169.254.0.0/16",  # link-local: instance metadata 169.254.169.254
    "172.16.0.0/12",  # private
    "192.0.0.0/24",  # IETF protocol assignments
    "192.0.2.0/24",  # documentation (TEST-NET-1)
    "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
    "192.168.0.0/16",  # private
    "198.18.0.0/15",  # benchmarking
    "198.51.100.0/24",  # documentation (TEST-NET-2)
    "203.0.113.0/24",  # documentation (TEST-NET-3)
    "224.0.0.0/4",  # multicast
    "240.0.0.0/4",  # reserved, and 255.255.255.255 broadcast
    # IPv6
    "::/96",  # unspecified, loopback and IPv4-compatible (deprecated): refused whole
    "100::/64",  # discard-only
    "64:ff9b:1::/48",  # local-use IPv4/IPv6 translation: an operator's own NAT64
    "2001::/23",  # IETF protocol assignments (Teredo 2001::/32 is checked for its IPv4 too)
    "2001:db8::/32",  # documentation
    "3fff::/20",  # documentation
    "5f00::/16",  # segment routing (SRv6) SIDs
    "fc00::/7",  # unique local: fd00:ec2::254 (instance metadata over IPv6)
    "fe80::/10",  # link-local
    "fec0::/10",  # site-local (deprecated)
    "ff00::/8",  # multicast
)
SIIT = ipaddress.IPv6Network("::ffff:0:0:0/96")
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 one carries: where a translator or tunnel would send it."""
    found: list[ipaddress.IPv4Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address in SIIT or address in NAT64:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)  # (server, client)
    return found


def _public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return not any(address.version == net.version and address in net for net in NOT_PUBLIC)


def address_problem(text: str) -> str | None:
    """Why the address ``text`` may not be called, or None for a public one."""
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return "an address that is not an IP address"
    carried: list[ipaddress.IPv4Address] = []
    if isinstance(address, ipaddress.IPv6Address):
        carried = embedded_ipv4(address)
    if not _public(address) or not all(_public(ipv4) for ipv4 in carried):
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
    if port != 443:
        return "an https:// URL on port 443 (no other port)"
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
