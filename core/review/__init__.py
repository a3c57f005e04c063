"""The review page: evidence envelopes checked and drawn as one self-contained HTML file.
May import: every room up to extract (core/__init__.py's Order); it needs only errors and files.
"""
