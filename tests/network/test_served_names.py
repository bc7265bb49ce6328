"""Which publishers the Reactive Streams checks subscribe to on a server: the reserved names, or the user's own
named by a template in the target's URL (rstck/protocols/network/served_names.py); and the reference server's
templated factories (`rstck serve --publisher 'ticks/{n}=MODULE:FACTORY'`)."""

from __future__ import annotations

import pytest

from rstck.cli import main
from rstck.protocols.network.served_names import ServedNames, split_target_url
from rstck.reference.network.server import served_factory


def test_without_a_path_the_checks_subscribe_to_the_reserved_names():
    address, names = split_target_url("tcp://127.0.0.1:9000")
    assert (address, names.reserved, names.of_count(5), names.failed) == \
        ("tcp://127.0.0.1:9000", True, "rstck/range/5", "rstck/error")


def test_a_template_names_a_publisher_of_n_elements_and_failed_one_that_fails():
    address, names = split_target_url("tcp://[::1]:9000/streams/ticks-{n}.bin?failed=broken")
    assert address == "tcp://[::1]:9000"
    assert (names.of_count(7), names.failed, names.reserved) == ("streams/ticks-7.bin", "broken", False)
    assert [names.count_of(name) for name in ("streams/ticks-40.bin", "broken", "streams/ticks-.bin",
                                              "streams/ticks-4.bin.old", "rstck/range/4")] == [40, 0, None, None, None]
    assert split_target_url("tcp://h:1/ticks/%7Bn%7D")[1].template == "ticks/{n}"  # {n} as a URL quotes it


@pytest.mark.parametrize("url, said", [
    ("tcp://h:1/ticks", "with {n} once"),
    ("tcp://h:1/{n}/{n}", "with {n} once"),
    ("tcp://h:1/rstck/range/{n}", "are the reserved ones"),
    ("tcp://h:1/ticks/{n}?failed=rstck/error", "are the reserved ones"),
    ("tcp://h:1/ticks/{n}?limit=3", "the only query is ?failed=NAME"),
    ("tcp://h:1/ticks/{n}?failed=a&failed=b", "the only query is ?failed=NAME"),
    ("tcp://h:1/ticks/{n}?failed=", "?failed= names a publisher"),
])
def test_a_malformed_template_says_what_is_wrong(url, said):
    with pytest.raises(ValueError) as raised:
        split_target_url(url)
    assert said in str(raised.value)


def test_rstck_check_gives_a_malformed_template_one_line_and_exit_2(capsys):
    assert main(["check", "tcp://127.0.0.1:9/ticks"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rstck: target 'tcp://127.0.0.1:9/ticks': ") and "{n} once" in err, err


def test_the_server_serves_a_templated_name_by_the_factory_with_its_count():
    made = []
    publishers = {"ticks/{n}": lambda n: made.append(n) or n, "fixed": lambda: "fixed"}
    assert served_factory(publishers, "ticks/12")() == 12 and made == [12]
    assert served_factory(publishers, "fixed")() == "fixed"
    assert [served_factory(publishers, name) for name in ("ticks/", "ticks/x", "other/3")] == [None, None, None]


def test_served_names_default_is_the_reserved_pair():
    assert ServedNames() == ServedNames("rstck/range/{n}", "rstck/error")
