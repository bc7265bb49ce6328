"""The echo protocol's profile: its catalogue (catalogue.toml) and its checks (replies.py)."""

from rstck.core.plugins import Profile

PROFILE = Profile(
    name="echo-protocol",
    title="Echo protocol (an example profile from outside rstck)",
    package=__name__,
    checks=("replies",),
    subjects=("echo",),
    marker="echo",
    markers={"echo": "checks of the echo protocol's items (echo.*)"},
    section_needs={"replies": frozenset({"echo"})},
    context="line",  # a check is called with a line to the service, which the echo adapter supplies
)
