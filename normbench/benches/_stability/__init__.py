"""The stability bench's helpers: its report tables, the one-row-per-case summary and its summary lines."""
