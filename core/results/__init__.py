"""An extraction's results besides its text: evidence, doubtful values withheld, pieces merged, indented text.
May import: every room up to runtime (core/__init__.py's Order).
"""
