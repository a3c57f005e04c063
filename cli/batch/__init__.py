"""A batch: many documents, one schema, one result each, in input order. Which documents
(documents.py) and where their results go (results.py); the run from start to summary (run.py);
the documents extracted in this process (in_process.py) or over `--workers` processes
(workers.py, each running child.py), and each document delivered the one way (delivery.py).
May import: the library through its facade (`gguf_extract`) and the shared modules of cli/;
never cli.app nor cli.commands.
"""
