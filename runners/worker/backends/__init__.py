"""Runner backends: one module per way of starting an agent (process, docker), behind base.Backend."""
