"""The model's norm wrapper: any registry norm with an nn.Module, at any width, on (B, T, width) input.

Per-token norms (LayerNorm, RMSNorm, DyT) act on the last dim of (B, T, width) as they are. A norm that
declares `mixes_tokens` (BatchNorm, PowerNorm: statistics over the batch) gets the (B*T, width) view its
module wants (nn.BatchNorm1d reads a 3-D input as (N, C, L) and would take T for the channels), so its
statistics run over batch x time: every token of every sequence, which is why it is legal only for the
masked (bidirectional) objective. Its running statistics start at the module's own reset values (mean 0,
var 1), not the non-trivial ones the latency bench's builder gives them.

With a pad mask (B, T), True at padded positions, such a norm sees only the real tokens: it runs on the
(real tokens, width) rows, so its batch statistics, running statistics and (PowerNorm) backward averages
leave the padding out, as the PowerNorm authors' MaskPowerNorm does with `pad_mask` (sIncerass/powernorm,
fairseq/modules/norms/); their BatchNorm (batchnorm:official) counts padded positions filled with the real
tokens' mean, so a module that declares `fills_padding` also gets their count. Padded outputs are 0
(inert: no real position reads them).
Per-token norms run on every position as before. The kept inputs and the fluctuation hook see the real
tokens only."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from normbench.norms import get_norm


class NormLayer(nn.Module):
    """A registry norm over the last dim. `site` names it in results ("3.attn", "3.ffn_mid", "final").
    While `self.kept` is a list, each forward appends its input (detached): that is how benches see the
    actual input of every norm without hooks. While `self.before` is set, it is called with the (tokens,
    width) input and the inner module before the module runs (so before a train-mode forward updates
    running statistics): the batch-statistics fluctuation rows are measured there."""

    def __init__(self, norm: str, impl: str | None, width: int, eps: float, site: str, heads: int = 1):
        super().__init__()

        registered = get_norm(norm)
        impl = impl or registered.module_impl  # the norm's declared model implementation (norms/registry.py)
        if impl is None:
            raise ValueError(f"{norm} declares no module implementation (module_impl) to put in a model")
        # built on the CPU in fp32 like every other module here; TransformerLM.to(device) moves it
        built = registered.build(impl, width, eps=eps, dtype=torch.float32, device="cpu")
        if not isinstance(built.module, nn.Module):
            raise ValueError(f"{norm}:{impl} has no nn.Module to put in a model; use an impl that has one")
        self.inner = built.module
        if hasattr(self.inner, "reset_running_stats"):  # a fresh model's BatchNorm: mean 0, var 1
            self.inner.reset_running_stats()
        if hasattr(self.inner, "tie_to_model"):  # a norm that groups channels by head (powernorm:official)
            self.inner.tie_to_model(heads=heads, final=site == "final")
        self.flatten = registered.mixes_tokens
        self.width = width
        self.site = site
        self.kept: list[torch.Tensor] | None = None
        self.before: Callable | None = None

    def forward(self, x, pad_mask=None):  # (B, T, width) -> (B, T, width); pad_mask (B, T)
        if pad_mask is not None:
            return self._forward_padded(x, pad_mask)
        if self.kept is not None:
            self.kept.append(x.detach())
        if self.before is not None:
            self.before(x.detach().reshape(-1, x.shape[-1]), self.inner)
        if self.flatten:
            return self.inner(x.reshape(-1, x.shape[-1])).reshape(x.shape)
        return self.inner(x)

    def _forward_padded(self, x, pad_mask):
        flat = x.reshape(-1, x.shape[-1])
        real = ~pad_mask.reshape(-1)
        tokens = flat[real]  # (real tokens, width)
        if self.kept is not None:
            self.kept.append(tokens.detach())
        if self.before is not None:
            self.before(tokens.detach(), self.inner)
        if not self.flatten:
            return self.inner(x)
        out = torch.zeros_like(flat)
        if getattr(self.inner, "fills_padding", False):  # batchnorm:official counts the padded positions
            out[real] = self.inner(tokens, pad_count=int(pad_mask.sum()))
        else:
            out[real] = self.inner(tokens)
        return out.reshape(x.shape)
