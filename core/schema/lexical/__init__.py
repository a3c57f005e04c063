"""JSON's lexical pieces as regex trees: scalars (string characters, numbers, integer ranges),
string formats (and bounds on what their checkers accept), and the `pattern` keyword read under
both regex engines (with its character sets, and the strings neither engine matches).
May import: the base modules and automaton/ only, nothing of schema/ (core/schema/__init__.py's Order).
"""
