"""The GPU worker's side of hosted runs: framework-free, it imports no Django and holds no database
credentials or answers. It talks to the portal over its HTTP API with a worker token (client.py)."""
