"""Checks of the echo protocol's replies."""

from rstck import RuleViolation, rule


@rule("echo.1")
def a_line_comes_back_unchanged(line):
    """echo.1: "Hello, echo" is answered with "Hello, echo"."""
    answer = line.send("Hello, echo")
    if answer != "Hello, echo":
        raise RuleViolation("echo.1", "'Hello, echo'", repr(answer))


@rule("echo.2")
def an_empty_line_comes_back_empty(line):
    """echo.2: an empty line is answered with an empty line."""
    answer = line.send("")
    if answer != "":
        raise RuleViolation("echo.2", "''", repr(answer))
