"""The exit statuses of the `rstck` command, which a CI job gates on (docs/reports.md)."""

EXIT_CONFORMANT, EXIT_NONCONFORMANT, EXIT_BAD_INPUT = 0, 1, 2
EXIT_INTERRUPTED = 130  # the user's Ctrl-C, as a shell reports it
