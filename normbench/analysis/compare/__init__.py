"""Two runs compared, case by case: what `normbench compare` answers (docs/methodology.md, "Notes from the
code")."""
