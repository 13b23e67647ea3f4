"""Django's Redis cache, with one redis-py client per connection pool instead of one per command: making a
client builds its table of some 170 response callbacks, which cost about as much as the round trip itself (the
API's throttle and the board's pages make two or three of them a request)."""

from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient


class _ReusedClients(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    # RedisCacheClient's helpers below are Django's, which its type stubs do not declare.
    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)  # type: ignore[attr-defined]
        client = self._clients.get(index)
        if client is None:  # a client is thread-safe: it takes a connection from the pool for each command
            pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
            client = self._clients[index] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class ReusedClientRedisCache(RedisCache):
    def __init__(self, server: str, params: dict) -> None:
        super().__init__(server, params)
        self._class = _ReusedClients
