"""Ready-made tools whose results flow through the layer (for example a read-only SQL tool)."""
