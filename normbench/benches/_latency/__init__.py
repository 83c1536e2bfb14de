"""The latency bench's helpers: accuracy against float64, the copy probe and its roofline, process state, the report."""
