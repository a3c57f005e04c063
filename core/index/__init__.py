"""A schema compiled for one vocabulary: the tokens each state allows, the Guide that walks them, `extract check`'s report.
May import: every room up to grounding (core/__init__.py's Order).
"""
