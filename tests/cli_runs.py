"""What the tests of the command's refusals share: a small person schema, a model path that
does not exist, and the check of a usage error (exit 2, nothing on stdout, no traceback)."""

from __future__ import annotations

import subprocess

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 24}, "age": {"type": "integer", "minimum": 0, "maximum": 120}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
NO_MODEL = "/nowhere/model.gguf"  # a refusal before the model loads exits 2; after, this exits 4


def assert_usage_error(result: subprocess.CompletedProcess[bytes], *fragments: str) -> str:
    err = result.stderr.decode()
    assert result.returncode == 2, err
    assert result.stdout == b"" and "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err
    return err
