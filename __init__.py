"""gguf-extract: schema-valid JSON from documents with local GGUF models.

The library's whole public API is the names in `_EXPORTS` (and `__all__`), each documented in the
README's "Library reference"; the command line (`cli/`) uses nothing else of the library. They
are imported lazily, on first use, so that `extract --help` never imports numpy or llama.cpp; a
type checker reads them from the imports under TYPE_CHECKING, which tests/test_facade.py holds
equal to `_EXPORTS`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core.decode.types import SamplingSettings as SamplingSettings
    from .core.defaults import DEFAULT_ENCODING as DEFAULT_ENCODING
    from .core.defaults import DEFAULT_GPU_LAYERS as DEFAULT_GPU_LAYERS
    from .core.defaults import DEFAULT_GPU_PARALLEL as DEFAULT_GPU_PARALLEL
    from .core.defaults import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
    from .core.defaults import DEFAULT_RECURSION_DEPTH as DEFAULT_RECURSION_DEPTH
    from .core.defaults import DEFAULT_TEMPERATURE as DEFAULT_TEMPERATURE
    from .core.defaults import DEFAULT_TOP_P as DEFAULT_TOP_P
    from .core.documents.convert.box import conversions_now as conversions_now
    from .core.documents.convert.box import share_conversions as share_conversions
    from .core.documents.decoding import check_encoding as check_encoding
    from .core.documents.decoding import is_text_encoding as is_text_encoding
    from .core.documents.document import CONVERTED_FILE_LIMIT as CONVERTED_FILE_LIMIT
    from .core.documents.document import DOCUMENT_FORMATS as DOCUMENT_FORMATS
    from .core.documents.document import Converting as Converting
    from .core.documents.document import check_readable as check_readable
    from .core.documents.document import read_document as read_document
    from .core.documents.document import read_stream as read_stream
    from .core.errors import ContextTooSmall as ContextTooSmall
    from .core.errors import ConversionStopped as ConversionStopped
    from .core.errors import DocumentError as DocumentError
    from .core.errors import DocumentNotFound as DocumentNotFound
    from .core.errors import DocumentTooLarge as DocumentTooLarge
    from .core.errors import ExtractError as ExtractError
    from .core.errors import GenerationError as GenerationError
    from .core.errors import MisspelledKeyword as MisspelledKeyword
    from .core.errors import ModelError as ModelError
    from .core.errors import ModelNotFound as ModelNotFound
    from .core.errors import ModelNotGGUF as ModelNotGGUF
    from .core.errors import OutputError as OutputError
    from .core.errors import ReviewError as ReviewError
    from .core.errors import SchemaError as SchemaError
    from .core.errors import SequenceSlotRefused as SequenceSlotRefused
    from .core.errors import TokenBudgetTooSmall as TokenBudgetTooSmall
    from .core.errors import UndecodableDocument as UndecodableDocument
    from .core.errors import UnsupportedSchema as UnsupportedSchema
    from .core.errors import misspelling_hint as misspelling_hint
    from .core.extract.chunked import CHUNKED_TEXT_LIMIT as CHUNKED_TEXT_LIMIT
    from .core.extract.chunked import ChunkedExtraction as ChunkedExtraction
    from .core.extract.extraction_run import ExtractionRun as ExtractionRun
    from .core.extract.extractor import Extraction as Extraction
    from .core.extract.extractor import ExtractionStats as ExtractionStats
    from .core.extract.extractor import Extractor as Extractor
    from .core.files import write_atomically as write_atomically
    from .core.index.check import SchemaReport as SchemaReport
    from .core.index.check import check_schema_support as check_schema_support
    from .core.index.compiled import CompiledSchema as CompiledSchema
    from .core.index.guide import Guide as Guide
    from .core.index.guide import new_bitmask as new_bitmask
    from .core.integrations.llama_cpp_processor import llama_cpp_logits_processor as llama_cpp_logits_processor
    from .core.model import bundled_model_path as bundled_model_path
    from .core.model_files import cached_models as cached_models
    from .core.model_files import model_folders as model_folders
    from .core.model_files import resolve_model as resolve_model
    from .core.processes import module_command as module_command
    from .core.results.abstain import FlaggedValue as FlaggedValue
    from .core.results.indent import Indenter as Indenter
    from .core.review.evidence import ReviewDocument as ReviewDocument
    from .core.review.page import render_review as render_review
    from .core.review.page import write_review as write_review
    from .core.runtime.scheduler import JobSteps as JobSteps
    from .core.runtime.scheduler import Outcome as Outcome
    from .core.runtime.session import ModelOptions as ModelOptions
    from .core.schema.read.load import Schema as Schema
    from .core.schema.read.sources import load_schema as load_schema
    from .core.schema.read.sources import packaged_schema_names as packaged_schema_names
    from .core.schema.read.sources import schema_label as schema_label
    from .core.schema.read.validation import best_error as best_error
    from .core.schema.read.validation import validator_for_schema as validator_for_schema
    from .core.vocab.token_table import Vocabulary as Vocabulary

# Each public name and the module that defines it, by what it is for.
_EXPORTS: dict[str, str] = {
    # Extraction: open a model, compile a schema, extract
    "Extractor": "core.extract.extractor",
    "ModelOptions": "core.runtime.session",
    "SamplingSettings": "core.decode.types",
    "Extraction": "core.extract.extractor",
    "ChunkedExtraction": "core.extract.chunked",
    "ExtractionRun": "core.extract.extraction_run",
    "ExtractionStats": "core.extract.extractor",
    "FlaggedValue": "core.results.abstain",
    "Outcome": "core.runtime.scheduler",
    "JobSteps": "core.runtime.scheduler",
    "bundled_model_path": "core.model",
    "cached_models": "core.model_files",
    "model_folders": "core.model_files",
    "resolve_model": "core.model_files",
    # Schemas
    "Schema": "core.schema.read.load",
    "load_schema": "core.schema.read.sources",
    "schema_label": "core.schema.read.sources",
    "packaged_schema_names": "core.schema.read.sources",
    "CompiledSchema": "core.index.compiled",
    "check_schema_support": "core.index.check",
    "SchemaReport": "core.index.check",
    "validator_for_schema": "core.schema.read.validation",
    "best_error": "core.schema.read.validation",
    # Token by token: the guide, and llama-cpp-python's own API held to a schema
    "Guide": "core.index.guide",
    "new_bitmask": "core.index.guide",
    "Vocabulary": "core.vocab.token_table",
    "llama_cpp_logits_processor": "core.integrations.llama_cpp_processor",
    # Documents
    "read_document": "core.documents.document",
    "read_stream": "core.documents.document",
    "check_readable": "core.documents.document",
    "check_encoding": "core.documents.decoding",
    "is_text_encoding": "core.documents.decoding",
    "DOCUMENT_FORMATS": "core.documents.document",
    "Converting": "core.documents.document",
    "CONVERTED_FILE_LIMIT": "core.documents.document",
    "share_conversions": "core.documents.convert.box",
    "conversions_now": "core.documents.convert.box",
    "CHUNKED_TEXT_LIMIT": "core.extract.chunked",
    # Output: indented JSON, whole files, the review page
    "Indenter": "core.results.indent",
    "write_atomically": "core.files",
    "module_command": "core.processes",
    "ReviewDocument": "core.review.evidence",
    "write_review": "core.review.page",
    "render_review": "core.review.page",
    # Defaults: the values the command line shows and uses
    "DEFAULT_MAX_TOKENS": "core.defaults",
    "DEFAULT_TEMPERATURE": "core.defaults",
    "DEFAULT_TOP_P": "core.defaults",
    "DEFAULT_GPU_LAYERS": "core.defaults",
    "DEFAULT_GPU_PARALLEL": "core.defaults",
    "DEFAULT_RECURSION_DEPTH": "core.defaults",
    "DEFAULT_ENCODING": "core.defaults",
    # Errors: one family, each with a message and a hint
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
    "misspelling_hint": "core.errors",
}
__all__ = sorted(_EXPORTS)


# Modules whose import loads neither numpy nor llama.cpp (tests/test_facade.py holds them to it),
# so that reading the defaults, errors, schemas and documents stays quick.
_LIGHT_MODULES = frozenset(
    {
        "core.errors",
        "core.defaults",
        "core.files",
        "core.model_files",
        "core.results.indent",
        "core.documents.document",
        "core.schema.read.load",
        "core.schema.read.sources",
        "core.schema.read.validation",
    }
)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'gguf_extract' has no attribute {name!r}")
    if _EXPORTS[name] not in _LIGHT_MODULES:
        # llama.cpp's libraries before numpy's: core/model.py says why.
        importlib.import_module(".core.model", __name__)
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)


def __dir__() -> list[str]:
    return __all__
