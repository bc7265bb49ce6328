"""The `where` block under a failure `rstck check` prints: what each name of its trace stands for."""

from __future__ import annotations

from rstck.cli import main


def where_block(capsys, target: str) -> dict[str, str]:
    """name -> what it stands for, from the `where` block of the first failure `rstck check` prints for 1.1."""
    code = main(["check", target, "--rules", "1.1", "--no-fuzz"])
    out = capsys.readouterr().out
    assert code == 1, out
    block = out[out.index("\n  where:\n") + len("\n  where:\n"):]
    lines = block[:block.index("\n  (") if "\n  (" in block else len(block)].splitlines()
    return dict(line.split(maxsplit=1) for line in lines if line.startswith("      "))
