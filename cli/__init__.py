"""The command line, `extract`: parse the arguments, call the library, report on stderr, exit with a code.

How a run goes: cli.app parses argv (each command's options declared there, the shared ones in
cli.options) into a request (cli.request) and runs its command (cli.commands) inside cli.guard,
which turns what the command raises into one line on stderr and an exit code (cli.exit_codes,
worded by cli.hints). `extract` checks its options first (cli.preflight), then streams one
document's JSON to stdout (cli.commands.extract) or runs a batch (cli.batch): one line per
document on stdout, or one file each in `--output-dir`, extracted in this process or in
`--workers` processes, each a child running cli.batch.child. Both take the same extraction steps
(cli.extraction_steps) and write through cli.output, cli.evidence and cli.records, as
cli.interrupts lets them.
May import: the library only through its facade, `gguf_extract` (tests/test_facade.py holds it so).
"""
