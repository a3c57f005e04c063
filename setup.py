"""The compiled modules: token walks through the DFA's table (core/index/_walks.c), the DFA's
rows and the NFA's closures (core/automaton/_rows.c), and the pairs of a product of two character
machines (core/automaton/_product.c). Optional: where no C compiler is found the
install goes on, and the same work runs in numpy and Python."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("gguf_extract.core.index._walks", ["core/index/_walks.c"], optional=True),
        Extension("gguf_extract.core.automaton._rows", ["core/automaton/_rows.c"], optional=True),
        Extension("gguf_extract.core.automaton._product", ["core/automaton/_product.c"], optional=True),
    ]
)
