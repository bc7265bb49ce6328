"""The mutant zoo: implementations broken in exactly one way, each with the verdicts it must get."""
