"""Models the training benches build. transformer.py: a small decoder-only LM whose norm placement
(post, pre, deepnorm, sandwich), norm (from the registry) and init (xavier, deepnorm, depth_scaled) are
parameters. Importing this package imports torch; bench modules import it inside run_case only."""

from normbench.models.transformer import (
    INITS,
    PLACEMENTS,
    DecoderLM,
    ModelConfig,
    deepnorm_alpha,
    deepnorm_beta,
    depth_scale,
)

__all__ = [
    "INITS",
    "PLACEMENTS",
    "DecoderLM",
    "ModelConfig",
    "deepnorm_alpha",
    "deepnorm_beta",
    "depth_scale",
]
