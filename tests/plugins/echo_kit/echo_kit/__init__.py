"""An example of a profile and an adapter shipped outside rstck: the echo protocol, checked against services that
answer a line with a line."""
