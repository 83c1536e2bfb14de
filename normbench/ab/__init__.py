"""normbench ab: base against head in one job (ab/gate.py), the base side loaded beside the working tree (ab/sides.py)."""
