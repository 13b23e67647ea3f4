from allauth.account.adapter import DefaultAccountAdapter
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from portal.client_ip import client_ip


class AccountAdapter(DefaultAccountAdapter):
    """allauth, counting login attempts per client address by the same rule as the API throttles."""

    def get_client_ip(self, request: HttpRequest) -> str:
        ip = client_ip(request)
        if not ip:
            raise PermissionDenied("Unable to determine the client's IP address.")
        return ip
