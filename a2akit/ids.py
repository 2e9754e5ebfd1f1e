"""The ids the kit mints: tasks, contexts, messages, artifacts, push configs, lease owners."""

from __future__ import annotations

import os

__all__ = ["new_id"]

# A random 128-bit number becomes a version 4 UUID by its version (4) and variant (0b10) bits.
_CLEAR = ~(0xF << 76 | 0x3 << 62)
_SET = 0x4 << 76 | 0x2 << 62


def new_id() -> str:
    """A random UUID (version 4) in its canonical text form, as `str(uuid.uuid4())` gives it,
    at half the cost: uuid.UUID's constructor checks are most of that, and every SendMessage
    mints up to three of these."""
    h = f"{int.from_bytes(os.urandom(16), 'big') & _CLEAR | _SET:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

