"""The address a request comes from, for sign-in throttling and the audit log.

The socket's address (``REMOTE_ADDR``) unless it is one of ``KB_TRUSTED_PROXIES`` (addresses
or networks): only then is ``X-Forwarded-For`` read, from the right, skipping the trusted
proxies, and the first address no trusted proxy owns is the client. Anyone can write an
``X-Forwarded-For`` header: believed from anywhere, it would let one caller pose as any number
of addresses (and as a colleague's, to get them throttled). The web server is started without
its own proxy-header handling (``--no-proxy-headers``), so ``REMOTE_ADDR`` is the socket's.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"KB_TRUSTED_PROXIES: {entry!r} is not an address or a network"
            ) from None
    return tuple(networks)


def trusted_networks() -> tuple[Network, ...]:
    """``KB_TRUSTED_PROXIES`` parsed (cached; a bad entry is a configuration error)."""
    return _networks(tuple(settings.TRUSTED_PROXIES))


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def is_address(text: str) -> bool:
    return _address(text) is not None


def is_trusted(address: str) -> bool:
    parsed = _address(address)
    return parsed is not None and any(parsed in network for network in trusted_networks())


def address_group(address: str) -> str:
    """What counters count an address by: an IPv6 address's /64 network (a single host is given
    a /64 and may use any address of it: counted one by one, each would be a new guesser), an
    IPv4 address, or one mapped into IPv6, as it is; anything else as given."""
    parsed = _address(address)
    if parsed is None:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


def client_address(request) -> str:
    """The client's address (see the module docstring); "unknown" without any."""
    remote = (request.META.get("REMOTE_ADDR") or "").strip() if request is not None else ""
    if not remote or not is_trusted(remote):
        return remote or "unknown"
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    for hop in reversed([h for h in hops if h]):
        parsed = _address(hop)
        if parsed is None:
            return remote  # a malformed hop: believe nothing the header says
        if not is_trusted(hop):
            return str(parsed)
    return remote
