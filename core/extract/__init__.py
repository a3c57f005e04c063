"""The public entry: a model opened, schemas compiled, extraction from one prompt, a long document in pieces, many at once.
May import: every room up to results (core/__init__.py's Order).
"""
