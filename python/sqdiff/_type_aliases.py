"""The type aliases that the annotations of the package's functions name.

Only the type checker imports this module (under ``typing.TYPE_CHECKING``): at run
time the annotations stay strings (``from __future__ import annotations``).
"""

from typing import Literal, Sequence, SupportsIndex, Union

BroadcastMode = Literal["numpy", "none", "pdpd"]
ShapeLike = Union[SupportsIndex, Sequence[SupportsIndex]]
AxesLike = Union[None, SupportsIndex, Sequence[SupportsIndex]]
