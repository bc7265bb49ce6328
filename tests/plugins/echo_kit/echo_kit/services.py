"""Echo services: one that keeps the protocol, one that shouts (breaks echo.1), one that trims (echo.2)."""


def faithful(line):
    return line


def shouting(line):
    return line.upper()


def padding(line):
    return line or " "
