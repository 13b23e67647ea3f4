"""The client address that login limits and API throttles count, with and without trusted proxies."""

import pytest
from django.test import RequestFactory

from portal.client_ip import client_ip, client_ip_key


def _request(remote: str = "10.0.0.1", **headers):
    return RequestFactory().get("/", REMOTE_ADDR=remote, **headers)


@pytest.mark.parametrize(
    ("proxies", "forwarded", "expected"),
    [
        (0, None, "10.0.0.1"),
        (0, "203.0.113.5", "10.0.0.1"),  # not trusted: anyone can write the header
        (1, None, "10.0.0.1"),  # came around the proxy
        (1, "203.0.113.5", "203.0.113.5"),
        (1, "192.0.2.9, 203.0.113.5", "203.0.113.5"),  # what the client wrote itself comes first
        (2, "192.0.2.9, 203.0.113.5, 10.0.0.2", "203.0.113.5"),
        (2, "203.0.113.5", "203.0.113.5"),  # fewer hops than proxies: the first hop sent it
        (1, "not-an-address", "10.0.0.1"),
        (1, " 2001:db8::1 ", "2001:db8::1"),
    ],
)
def test_the_client_address_is_read_from_forwarded_for_only_through_trusted_proxies(
    settings, proxies, forwarded, expected
):
    settings.TRUSTED_PROXY_COUNT = proxies
    headers = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    assert client_ip(_request(**headers)) == expected


def test_a_configured_header_names_the_client_instead(settings):
    settings.TRUSTED_CLIENT_IP_HEADER = "X-Real-IP"
    request = _request(HTTP_X_REAL_IP="203.0.113.5", HTTP_X_FORWARDED_FOR="192.0.2.1")
    assert client_ip(request) == "203.0.113.5"
    assert client_ip(_request()) == "10.0.0.1"


def test_ipv6_clients_are_counted_by_their_64_network():
    assert client_ip_key(_request("2001:db8:1:2:aaaa::1")) == client_ip_key(_request("2001:db8:1:2:bbbb::9"))
    assert client_ip_key(_request("2001:db8:1:2::1")) == "2001:db8:1:2::"
    assert client_ip_key(_request("192.0.2.1")) == "192.0.2.1"
