"""The block bench's `block` choices: "linear", every registered norm with a block module, and
`<norm>_folded` for the norms that fold into the Linear. Torch-free: validating a suite reads them."""

from __future__ import annotations

from collections.abc import Sequence

from normbench.norms import all_norms

FOLDED = "_folded"


def block_names() -> list[str]:
    """ "linear", then per registered norm with a module: its name, and `<name>_folded` when it folds.
    Torch-free (validation reads it): only the norms' declarations are consulted."""
    names = ["linear"]
    for name, norm in all_norms().items():
        if norm.block_impl is None:
            continue
        names.append(name)
        if norm.folds_into_linear:
            names.append(name + FOLDED)
    return names


class _RegistryChoices(Sequence):
    """The `block` choices, read from the registry when validation asks (so a plugin norm is one)."""

    def __getitem__(self, i):
        return block_names()[i]

    def __len__(self) -> int:
        return len(block_names())


BLOCKS = _RegistryChoices()


def norm_of(block: str) -> tuple[str, bool]:
    """(norm name, folded) of a valid block other than "linear"."""
    if block in all_norms():
        return block, False
    return block.removesuffix(FOLDED), True
