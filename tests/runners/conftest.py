"""Fixtures of the runner tests.

The Docker fixtures live in docker_engine.py (the engine, the example agent's image, misbehaving variants);
importing them here makes them available to every test under tests/runners/.
"""

from tests.runners.docker_engine import agent_image, docker_client, make_agent_image  # noqa: F401
from tests.runners.gpu_worker import start_gpu_worker  # noqa: F401
