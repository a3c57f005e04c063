"""A JSON Schema read, checked and compiled into one regex tree for the automaton (no tokens, no model).
May import: the base modules and automaton/ (core/__init__.py's Order).
"""
