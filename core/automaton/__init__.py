"""Regular expressions over bytes and the lazy automata built from them: NFA, DFA, forced text, shortest completions, escapes.
May import: the base modules only (core/__init__.py's Order).
"""
