"""gguf-extract: schema-valid JSON from documents with local GGUF models.

The public API is re-exported here lazily so that `extract --help` never imports numpy or
llama.cpp.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "Extractor": "core.extract",
    "Extraction": "core.extract",
    "ExtractionStats": "core.extract",
    "ChunkedExtraction": "core.chunked",
    "ModelOptions": "core.extract",
    "SamplingSettings": "core.decode_types",
    "CompiledSchema": "core.compiled",
    "Guide": "core.guide",
    "new_bitmask": "core.guide",
    "llama_cpp_logits_processor": "core.llama_cpp_processor",
    "compile_schema": "core.compiled",
    "Vocabulary": "core.vocab",
    "load_schema_file": "core.schema.load",
    "load_schema": "core.schema.sources",
    "check_schema_support": "core.check",
    "SchemaReport": "core.check",
    "ChatPrompt": "core.model",
    "ExtractError": "core.errors",
    "SchemaError": "core.errors",
    "UnsupportedSchema": "core.errors",
    "MisspelledKeyword": "core.errors",
    "ModelError": "core.errors",
    "ModelNotFound": "core.errors",
    "ModelNotGGUF": "core.errors",
    "DocumentError": "core.errors",
    "DocumentNotFound": "core.errors",
    "UndecodableDocument": "core.errors",
    "DocumentTooLarge": "core.errors",
    "ConversionStopped": "core.errors",
    "ContextTooSmall": "core.errors",
    "SequenceSlotRefused": "core.errors",
    "GenerationError": "core.errors",
    "TokenBudgetTooSmall": "core.errors",
    "OutputError": "core.errors",
    "ReviewError": "core.errors",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'gguf_extract' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
