# install: the project and its test tools into .venv   test: the whole suite
# lint: ruff and mypy --strict                           bench: extract vs llama-cpp-python's grammar
# coverage: compile rate and soundness over the JSONSchemaBench corpus (add ARGS=--update-baseline to record)
# masks: compile and mask times over a corpus sample beside llguidance (pip install llguidance; ARGS=--vocab gemma3)
PY := .venv/bin/python

install:
	python3 -m venv .venv && $(PY) -m pip install -e '.[dev]'

test:
	$(PY) -m pytest

lint:
	$(PY) -m ruff check . && d=$$(mktemp -d) && ln -s $(CURDIR) $$d/gguf_extract && cd $$d && $(CURDIR)/$(PY) -m mypy -p gguf_extract.core -p gguf_extract.cli

bench:
	$(PY) bench/grammar_compare.py

coverage:
	$(PY) -W ignore bench/corpus_coverage.py $(ARGS)

masks:
	$(PY) -W ignore bench/masks.py $(ARGS)

.PHONY: install test lint bench coverage masks
