"""Which publishers the Reactive Streams checks subscribe to on a server under test.

By default the reserved ones (`rstck/range/N` for a publisher of N elements, `rstck/error` for a failed one), which
every server serves: what the kit then checks is the server. A publisher of the user's own that a server serves is
checked by naming it in the target's URL with a template, `tcp://HOST:PORT/NAME` where NAME holds `{n}` once: a
publisher of exactly n elements is subscribed to as NAME with n in place of `{n}` (`tcp://127.0.0.1:9000/ticks/{n}`
subscribes to `ticks/5` for five). `?failed=NAME` names a publisher that fails each subscriber at once (the checks
that need one are n/a without it). `rstck serve --publisher 'ticks/{n}=MODULE:FACTORY'` serves FACTORY(n) under
such names (docs/network.md, "Checking the publishers you serve").
"""

from __future__ import annotations

import dataclasses
import re
import urllib.parse

from rstck.protocols.network import RESERVED_PREFIX

COUNT = "{n}"
_DECIMAL = r"[0-9]{1,19}"


@dataclasses.dataclass(frozen=True)
class ServedNames:
    """The names a check's publishers are subscribed to: `template` with n for `{n}`, and `failed` (None: none)."""

    template: str = RESERVED_PREFIX + "range/" + COUNT
    failed: str | None = RESERVED_PREFIX + "error"

    @property
    def reserved(self) -> bool:
        return self == ServedNames()

    def of_count(self, n: int) -> str:
        return self.template.replace(COUNT, str(n))

    def count_of(self, name: str) -> int | None:
        """How many elements the publisher `name` promises: n for a name the template makes, 0 for the failed one;
        None for any other name."""
        if name == self.failed:
            return 0
        before, after = self.template.split(COUNT)
        match = re.fullmatch(re.escape(before) + f"({_DECIMAL})" + re.escape(after), name)
        return int(match.group(1)) if match else None


def split_target_url(url: str) -> tuple[str, ServedNames]:
    """`tcp://HOST:PORT` and the names of `tcp://HOST:PORT[/TEMPLATE][?failed=NAME]`; ValueError saying what is
    wrong with the path or the query (the address itself is read by `connection.parse_url`)."""
    parts = urllib.parse.urlsplit(url)
    address = urllib.parse.urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    if not parts.path and not parts.query:
        return address, ServedNames()
    template = urllib.parse.unquote(parts.path.removeprefix("/"))
    if template.count(COUNT) != 1:
        raise ValueError(f"{url!r}: the path after the port names your publishers with {COUNT} once, as in "
                         f"tcp://127.0.0.1:9000/ticks/{COUNT} (ticks/5 for a publisher of five elements)")
    query = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - {"failed"})
    if unknown or len(query.get("failed", [""])) != 1 or parts.fragment:
        raise ValueError(f"{url!r}: the only query is ?failed=NAME, the publisher that fails each subscriber")
    failed = query["failed"][0] if "failed" in query else None
    for name in filter(None, (template, failed)):
        if name.startswith(RESERVED_PREFIX):
            raise ValueError(f"{url!r}: names starting with {RESERVED_PREFIX!r} are the reserved ones, served by "
                             f"every server; name yours")
    if failed == "":
        raise ValueError(f"{url!r}: ?failed= names a publisher")
    return address, ServedNames(template, failed)
