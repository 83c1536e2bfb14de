"""normbench's version, in a module of its own so that any layer can read it without the root package's
facade (normbench/__init__.py); pyproject.toml reads it from here."""

__version__ = "0.2.0"
