"""The decoding loop over a Guide: its state as one value, a token's steps, sampling, the followers that watch the output
and the policies that have a say in its choices.
May import: every room up to integrations (core/__init__.py's Order).
"""
