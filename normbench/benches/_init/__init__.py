"""The init bench's helpers: the scale-invariance rows and its report."""
