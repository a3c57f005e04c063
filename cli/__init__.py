"""The command line, `extract`: parse the arguments, call the library, report on stderr, exit with a code.
May import: the library only through its facade, `gguf_extract` (tests/test_facade.py holds it so).
"""
