"""Which address a request comes from: X-Forwarded-For is believed only when a trusted proxy sent it.

Anyone can send an X-Forwarded-For header, so by default it is ignored and a request's address is
the connection's. LEVAL_TRUSTED_PROXIES names the proxies in front of the app:

- unset or `0`: none (the default);
- a number N: the app is reachable only through N proxies; the client is the N-th address from the
  right of X-Forwarded-For;
- a comma-separated list of addresses or networks (`10.0.0.5, 10.1.0.0/16, ::1`): the header is read
  only on a connection from one of them, walked from the right while its hops are listed proxies
  too; the first address that is not is the client.

werkzeug's ProxyFix does the rewriting (it keeps the original address in the environ); only the
address is taken from the proxy, nothing else it forwards.
"""
from __future__ import annotations

from ipaddress import IPv4Network, IPv6Network, ip_address, ip_network

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from app.core.numbers import parse_whole_number

Networks = tuple[IPv4Network | IPv6Network, ...]
MAX_PROXY_HOPS = 99


class ProxySettingError(ValueError):
    """LEVAL_TRUSTED_PROXIES holds something that is neither a count nor addresses."""


def parse_trusted_proxies(value: str | int | None) -> int | Networks:
    """A number of proxy hops, or the networks of the trusted proxies; 0 for none."""
    text = str(value if value is not None else "").strip()
    if not text:
        return 0
    hops = parse_whole_number(text, maximum=MAX_PROXY_HOPS)
    if hops is not None:
        return hops
    networks = []
    for part in (p.strip() for p in text.split(",")):
        try:
            networks.append(ip_network(part, strict=False))
        except ValueError:
            raise ProxySettingError(f"LEVAL_TRUSTED_PROXIES: {part!r} is neither a number of proxies nor an "
                                    "IP address or network (e.g. 1, or 10.0.0.5, 10.1.0.0/16)") from None
    return tuple(networks)


def peer_is_proxy(trusted: int | Networks, address: str) -> bool:
    """Whether a connection from `address` is a trusted proxy's (given a number of hops, every connection is)."""
    if isinstance(trusted, int):
        return trusted > 0
    try:
        ip = ip_address(address.strip().strip("[]"))
    except ValueError:
        return False
    return any(ip in network for network in trusted)


class TrustedProxies:
    """WSGI middleware: ProxyFix with as many X-Forwarded-For hops as this request's listed proxies vouch for."""

    def __init__(self, wsgi_app, networks: Networks):
        self.wsgi_app = wsgi_app
        self.networks = networks
        self._fixes: dict[int, ProxyFix] = {}

    def trusted(self, address: str) -> bool:
        return peer_is_proxy(self.networks, address)

    def __call__(self, environ, start_response):
        hops = [hop.strip() for hop in environ.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
        if not hops or not self.trusted(environ.get("REMOTE_ADDR", "")):
            return self.wsgi_app(environ, start_response)
        depth = 1  # the connection is a listed proxy: its last hop is believed, and so on while hops are proxies
        while depth < len(hops) and self.trusted(hops[-depth]):
            depth += 1
        fix = self._fixes.get(depth)
        if fix is None:
            fix = self._fixes[depth] = ProxyFix(self.wsgi_app, x_for=depth, x_proto=0)
        return fix(environ, start_response)


def trust_proxies(app: Flask) -> None:
    """Wrap the app so that request.remote_addr is the client behind the configured proxies."""
    trusted = parse_trusted_proxies(app.config.get("LEVAL_TRUSTED_PROXIES"))
    if isinstance(trusted, int):
        if trusted:
            app.wsgi_app = ProxyFix(app.wsgi_app, x_for=trusted, x_proto=0)
        return
    app.wsgi_app = TrustedProxies(app.wsgi_app, trusted)
