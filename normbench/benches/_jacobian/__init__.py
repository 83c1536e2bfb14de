"""Jacobian spectral norms of normalization layers: the closed forms (closed_forms), the input
distributions (inputs), the two measurements (measure: dense jacrev + SVD, and matrix-free Lanczos on
JᵀJ), the norm under test (subject) and the report tables (report).

This package imports nothing heavy on import; closed_forms, inputs, measure and subject import torch,
report only pandas, so `normbench report` never loads torch for the jacobian bench."""
