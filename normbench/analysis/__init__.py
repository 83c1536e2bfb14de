"""Turning stored rows into statistics, tables, comparisons and plots."""
