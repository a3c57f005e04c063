"""This library inside other runtimes, one thin module each: llama-cpp-python's logits processor and stopping criteria.
May import: every room up to index (core/__init__.py's Order); only the facade imports it.
"""
