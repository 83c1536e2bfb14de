"""Result storage: one directory per run (manifest.json + one Parquet part per finished case)."""
