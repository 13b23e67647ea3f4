"""The address a request comes from, as the login limits and the API throttles count it.

Behind the README's TLS proxy every request arrives from the proxy's address. The client's own address is
then in X-Forwarded-For, which anyone can also write, so it is read only when TRUSTED_PROXY_COUNT says how
many proxies of ours append to it: the entry the outermost of them added is the client's, and whatever the
client wrote before it is ignored. TRUSTED_CLIENT_IP_HEADER names a header a proxy of ours sets instead
(X-Real-IP, CF-Connecting-IP).
"""

import ipaddress

from django.conf import settings
from django.http import HttpRequest

# An IPv6 client holds at least a /64; counting each address apart would give it 2**64 budgets.
IPV6_PREFIX = 64


def _address(text: str | None) -> str | None:
    try:
        return str(ipaddress.ip_address((text or "").strip()))
    except ValueError:
        return None


def client_ip(request: HttpRequest) -> str:
    remote = request.META.get("REMOTE_ADDR", "")
    header = settings.TRUSTED_CLIENT_IP_HEADER
    if header:
        return _address(request.headers.get(header)) or remote
    proxies = settings.TRUSTED_PROXY_COUNT
    forwarded = request.headers.get("X-Forwarded-For", "")
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",")]
        # Fewer hops than proxies: the request skipped the outer ones, and the first hop is its sender.
        return _address(hops[-min(proxies, len(hops))]) or remote
    return remote


def client_ip_key(request: HttpRequest) -> str:
    """client_ip, with an IPv6 address widened to its /64 network, for counting requests."""
    ip = client_ip(request)
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/{IPV6_PREFIX}", strict=False).network_address)
    return ip
