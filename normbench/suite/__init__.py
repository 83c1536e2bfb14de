"""Suites: TOML files that declare benchmarks. load -> validate -> expand into cases."""
