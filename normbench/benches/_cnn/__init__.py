"""The cnn bench's helpers: its training loop (training.py) and its report (report.py)."""
