"""The ground floor: the vocabulary every other layer shares and that imports nothing of normbench above it.

errors (what a user can act on), params (a bench's parameter specs, did_you_mean), tables (report tables and
their formatting), stats (sample summaries), tolerance (how close a deterministic value
must be across machines), registry (one Registry for norms, benches, claims and plots) and
plugins (discovering the modules that fill those registries). Each is imported on its own
(`from normbench.core.params import Param`); this package imports none of them, so importing it is free."""
