"""gguf-extract: schema-valid JSON from documents with local GGUF models."""
