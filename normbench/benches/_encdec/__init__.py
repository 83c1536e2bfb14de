"""The encoder-decoder bench kind's helpers (benches/encdec.py): its parameters, case, training loop's family and report."""
