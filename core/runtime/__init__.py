"""The model in use: its weights and their context, the context's budget (and the one error when
a prompt does not fit it), and one scheduler stepping every document's decoding over a context's sequences.
May import: every room up to decode (core/__init__.py's Order).
"""
