"""Files written whole or not at all."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomically(target: Path, text: str) -> None:
    """Write `text` to `target` through a temporary file in the same folder and a rename, so
    `target` is either absent or complete. The file gets the mode any new file would (0666
    less the umask), not mkstemp's private 0600. Raises OSError (disk full, permissions)."""
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            os.fchmod(out.fileno(), 0o666 & ~_umask())
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _umask() -> int:
    """The process's umask. Python can only read it by setting it, so it is set back at once."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
