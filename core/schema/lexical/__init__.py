"""JSON's lexical pieces as regex trees: scalars (string characters, numbers, integer ranges),
string formats, and the `pattern` keyword read under both regex engines (with its character sets).
May import: the base modules and automaton/ only, nothing of schema/ (core/schema/__init__.py's Order).
"""
