"""A model's tokens as bytes laid out for the token index, their on-disk cache, forced text tokenized as the model would.
May import: the base modules, automaton, schema, documents (core/__init__.py's Order).
"""
