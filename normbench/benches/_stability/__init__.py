"""The stability bench's helpers: its report tables."""
