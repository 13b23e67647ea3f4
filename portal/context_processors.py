from django.http import HttpRequest

from portal.accounts.selectors import is_maintainer


def navigation(request: HttpRequest) -> dict:
    return {"is_maintainer": is_maintainer(request.user)}
