"""Models the training benches build. transformer.py: a small LM (causal decoder or masked-token encoder)
whose norm placement (post, pre, deepnorm, sandwich, subln, periln), norm (from the registry, wrapped by
norm.py) and init (init.py: xavier, deepnorm, depth_scaled, magneto) are parameters; encdec.py: an
encoder-decoder from the same parts (DeepNet's encoder-decoder constants). Importing this package imports
torch; bench modules import it inside run_case only."""

from normbench.models.encdec import EncDecConfig, EncoderDecoder
from normbench.models.transformer import OBJECTIVES, PLACEMENTS, ModelConfig, TransformerLM
from normbench.models.weight_init import INITS, deepnorm_alpha, deepnorm_beta, depth_scale, magneto_gamma

__all__ = [
    "INITS",
    "OBJECTIVES",
    "PLACEMENTS",
    "EncDecConfig",
    "EncoderDecoder",
    "ModelConfig",
    "TransformerLM",
    "deepnorm_alpha",
    "deepnorm_beta",
    "depth_scale",
    "magneto_gamma",
]
