"""The one compiled module: token walks through the DFA's table (core/index/_walks.c). Optional:
where no C compiler is found the install goes on, and the same walks run in numpy."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("gguf_extract.core.index._walks", ["core/index/_walks.c"], optional=True)])
