"""Strings held to verbatim spans of the document, dates and numbers to those it states, values found in the document.
May import: the base modules, json_reader, automaton, schema, documents, vocab, model (core/__init__.py's Order).
"""
