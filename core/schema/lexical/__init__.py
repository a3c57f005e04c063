"""JSON's lexical pieces as regex trees: scalars (string characters, numbers, integer ranges),
string formats, and the `pattern` keyword read under both regex engines (with its character sets).
May import: core/automaton/ and the base modules only, nothing else of schema/ (schema/__init__.py's Order).
"""
