"""Two runs compared, case by case: `compare_runs` is what `normbench compare` answers (runs.py); the
frames, the marks and the exit code are its steps (docs/methodology.md, "Comparing runs")."""
