"""The block bench's helpers: its block names (read from the norm registry) and its report."""
