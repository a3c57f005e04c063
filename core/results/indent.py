"""Indented output from the canonical one-line layout, as the text streams.

The automaton writes one line with `", "` and `": "` separators. An `Indenter` re-lays that text
out while it streams, exactly as `json.dumps(value, indent=N)` would: the model never sees or
pays for the whitespace.
"""

from __future__ import annotations


class Indenter:
    """Feed canonical JSON text in chunks of any size; each call returns what can be written."""

    def __init__(self, indent: int) -> None:
        self._unit = " " * indent
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._opened = ""  # a bracket held back until we know whether its container is empty
        self._skip_space = False

    def feed(self, text: str) -> str:
        out: list[str] = []
        for character in text:
            self._take(character, out)
        return "".join(out)

    def finish(self) -> str:
        held, self._opened = self._opened, ""
        return held

    def _take(self, character: str, out: list[str]) -> None:
        if self._opened:
            opened, self._opened = self._opened, ""
            if character in "]}":
                out.append(opened + character)
                return
            self._depth += 1
            out.append(opened + self._newline())
        if self._in_string:
            out.append(character)
            if self._escaped:
                self._escaped = False
            elif character == "\\":
                self._escaped = True
            elif character == '"':
                self._in_string = False
            return
        if self._skip_space and character == " ":
            self._skip_space = False
            return
        self._skip_space = False
        if character == '"':
            self._in_string = True
            out.append(character)
        elif character in "[{":
            self._opened = character
        elif character in "]}":
            self._depth -= 1
            out.append(self._newline() + character)
        elif character == ",":
            out.append("," + self._newline())
            self._skip_space = True
        else:
            out.append(character)

    def _newline(self) -> str:
        return "\n" + self._unit * self._depth
