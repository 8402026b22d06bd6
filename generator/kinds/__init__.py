"""Accelerator layer kinds as vertical slices: one module per kind (:mod:`~generator.kinds.conv`,
:mod:`~generator.kinds.copy`, :mod:`~generator.kinds.emul`), each one :class:`~generator.kinds.base.LayerKind`
class holding the kind's float and integer cores, quantization specifics, tiling plan, emission and cost hooks;
the references, the quantizer and the code generator dispatch through :data:`KINDS` / :func:`kind_of` and keep no
branch on a kind's name. Adding a kind is its module, one entry here, and the hardware.

This package sits above :mod:`generator.ir` and imports only :mod:`generator.spec`, :mod:`generator.ir` and numpy.
"""
from __future__ import annotations

from generator.ir.graph import GraphError
from generator.kinds.base import LayerKind
from generator.kinds.conv import Conv
from generator.kinds.copy import Copy
from generator.kinds.emul import Emul

#: the registry: ``MacroAttrs.kind`` -> its :class:`LayerKind`
KINDS: dict[str, LayerKind] = {k.name: k for k in (Conv(), Copy(), Emul())}


def kind_of(obj) -> LayerKind:
    """The :class:`LayerKind` of ``obj``: a kind name, or anything with a ``kind`` name (a
    :class:`generator.ir.graph.MacroAttrs`, a :class:`generator.codegen.tiling.Layer`). Raises GraphError for a kind
    not in :data:`KINDS`."""
    name = obj if isinstance(obj, str) else getattr(obj, "kind", None)
    try:
        return KINDS[name]
    except (KeyError, TypeError):
        raise GraphError(f"layer kind {name!r} is not one of {', '.join(KINDS)}") from None
