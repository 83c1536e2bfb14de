"""normbench: benchmarks for normalization layers in PyTorch."""

__version__ = "0.1.0"
