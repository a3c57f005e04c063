"""The commands, one module each, doing what a command does once cli.app has parsed its options
into a request (cli.request): `extract` (one document, or a batch through cli.batch), `check`,
`text` and `models`. Each returns its exit code; cli.guard turns what it raises into one.
May import: the library through its facade (`gguf_extract`), the shared modules of cli/ and
cli.batch; never cli.app, nor one another.
"""
