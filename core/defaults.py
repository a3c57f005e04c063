"""The library's defaults, in a module that imports nothing: the command line shows and uses
these very values (never copies of them) without loading numpy or jsonschema, so its help
stays quick."""

from __future__ import annotations

DEFAULT_MAX_TOKENS = 1024  # most output tokens; the JSON always closes inside them
DEFAULT_TEMPERATURE = 0.0  # greedy, deterministic
DEFAULT_TOP_P = 1.0  # no nucleus cut
DEFAULT_GPU_LAYERS = -1  # every layer, where the llama.cpp build has a GPU
# Documents of a batch decoded together where the model runs on a GPU (elsewhere 1). Measured on
# an H200, 60 documents (docs/batches.md): 8 ran x1.44 and x1.53 of one at a time in two runs,
# 32 and 64 no faster (x1.57, x1.51, x1.44) with more memory (798 and 1,078 MiB against 620).
DEFAULT_GPU_PARALLEL = 8
DEFAULT_RECURSION_DEPTH = 3  # how many times a recursive $ref is unrolled along any path
DEFAULT_ENCODING = "utf-8"  # the documents' text encoding
