"""The model in use: one scheduler stepping every document's decoding over a context's sequences.
May import: every room up to decode (core/__init__.py's Order).
"""
