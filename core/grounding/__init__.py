"""Strings held to verbatim spans of the document, and each extracted value's evidence (its span, the model's confidence).
May import: the base modules, automaton, schema, documents, vocab, model (core/__init__.py's Order).
"""
