"""Indented output from the canonical one-line layout, as the text streams.

The automaton writes one line with `", "` and `": "` separators. An `Indenter` re-lays that text
out while it streams, exactly as `json.dumps(value, indent=N)` would: the model never sees or
pays for the whitespace. Where strings, brackets and commas are is read by a
core.json_reader.JsonReader: only brackets and commas are laid out, every other byte is
written as it is (but the space after a comma).
"""

from __future__ import annotations

from ..json_reader import ARRAY, COMMA, END_ARRAY, END_OBJECT, OBJECT, JsonReader

_WRITTEN = {OBJECT: b"{", ARRAY: b"[", END_OBJECT: b"}", END_ARRAY: b"]", COMMA: b","}  # the bytes laid out, by kind
_LAID_OUT = OBJECT | ARRAY | END_OBJECT | END_ARRAY | COMMA


class Indenter:
    """Feed canonical JSON text in chunks of any size; each call returns what can be written."""

    def __init__(self, indent: int) -> None:
        self._unit = b" " * indent
        self._depth = 0
        self._reader = JsonReader(_LAID_OUT)  # quotes and scalars are written as they are
        self._opened = b""  # a bracket held back until we know whether its container is empty
        self._skip_space = False  # after a comma: the space of its `", "` is left out

    def feed(self, text: str) -> str:
        data = text.encode("utf-8", "surrogatepass")
        out: list[bytes] = []
        at = 0  # the bytes of `data` before it are written out, or left out
        for kind, where in self._reader.feed(data):
            if where > at:
                self._run(data[at:where], out)
            at = where + 1
            written = _WRITTEN[kind]
            if self._opened:
                if kind & (END_OBJECT | END_ARRAY):  # the container is empty
                    out.append(self._opened + written)
                    self._opened = b""
                    continue
                self._open_container(out)
            self._skip_space = False
            if kind == COMMA:  # the line ends after it
                out.append(b",\n" + self._unit * self._depth)
                self._skip_space = True
            elif kind & (OBJECT | ARRAY):  # held back
                self._opened = written
            else:  # a closing bracket, on a line of its own
                self._depth -= 1
                out.append(b"\n" + self._unit * self._depth + written)
        if not at and not self._opened and not self._skip_space:
            return text  # no bracket, no comma, nothing held: as it is
        if at < len(data):
            self._run(data[at:], out)
        return b"".join(out).decode("utf-8", "surrogatepass")

    def finish(self) -> str:
        held, self._opened = self._opened, b""
        return held.decode()

    def _run(self, run: bytes, out: list[bytes]) -> None:
        """Bytes between brackets and commas: written as they are, but the space after a comma."""
        if self._opened:
            self._open_container(out)
        elif self._skip_space:
            self._skip_space = False
            if run[0] == 0x20:
                run = run[1:]
        out.append(run)

    def _open_container(self, out: list[bytes]) -> None:
        """The held bracket opens a container that is not empty: written, and a line below it."""
        self._depth += 1
        out.append(self._opened + b"\n" + self._unit * self._depth)
        self._opened = b""
