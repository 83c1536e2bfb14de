"""A normbench plugin package used by normbench's own tests (see tests/test_plugins.py)."""
