"""What the kit keeps between runs (rstck/core/install_cache.py) is kept for as long as what it was read from
stays the same, and never served for another key."""

from __future__ import annotations

import os
import pickle

import pytest

from rstck.core import install_cache
from rstck.core.install_cache import cached, file_stamp


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("RSTCK_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def counting(value):
    calls = []

    def compute():
        calls.append(value)
        return value
    return compute, calls


def test_a_value_is_computed_once_while_its_key_stays(cache_dir):
    compute, calls = counting({"read": 1})
    assert cached("thing", "slot", ("a", 1), compute) == {"read": 1}
    assert cached("thing", "slot", ("a", 1), compute) == {"read": 1}
    assert calls == [{"read": 1}]


def test_an_edited_file_is_read_afresh(cache_dir, tmp_path):
    source = tmp_path / "catalogue.toml"
    source.write_text("a = 1\n")
    first, calls = counting("first")
    assert cached("catalogue", str(source), file_stamp(str(source)), first) == "first"
    source.write_text("a = 22\n")  # another size: another stamp, whatever the clock's resolution
    second, _ = counting("second")
    assert cached("catalogue", str(source), file_stamp(str(source)), second) == "second"
    assert calls == ["first"]
    assert len(list(cache_dir.iterdir())) == 1  # the edit's entry replaced the first: one file per source


def test_a_file_of_another_key_under_the_same_name_is_a_miss(cache_dir):
    compute, _ = counting("mine")
    cached("thing", "slot", "mine", compute)
    [kept] = list(cache_dir.iterdir())
    with kept.open("rb") as file:
        key, _value = pickle.load(file)
    with kept.open("wb") as file:  # as if another key's checksum had named the same file
        pickle.dump((key + "-another", "not mine"), file)
    again, calls = counting("mine")
    assert cached("thing", "slot", "mine", again) == "mine"
    assert calls == ["mine"]


def test_an_unwritable_cache_reads_afresh_every_time(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("RSTCK_CACHE_DIR", str(blocked / "below"))
    compute, calls = counting(3)
    assert cached("thing", "slot", "k", compute) == 3
    assert cached("thing", "slot", "k", compute) == 3
    assert calls == [3, 3]
    assert not os.path.exists(blocked / "below")


def test_a_corrupt_entry_is_read_afresh(cache_dir):
    compute, _ = counting("value")
    cached("thing", "slot", "k", compute)
    [kept] = list(cache_dir.iterdir())
    kept.write_bytes(b"not a pickle")
    again, calls = counting("value")
    assert cached("thing", "slot", "k", again) == "value"
    assert calls == ["value"]
    assert install_cache.cache_directory() == str(cache_dir)


def test_installing_or_removing_a_distribution_changes_the_entry_points_key(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.setattr(install_cache.sys, "path", [str(site)])
    metadata = site / "my_profile-1.0.dist-info"  # what pip adds, with entry_points.txt inside
    for change in (metadata.mkdir, metadata.rmdir):
        os.utime(site, ns=(1, 1))  # long before: the change's time differs whatever the clock's resolution
        before = install_cache.installed_distributions_stamp()
        change()
        assert install_cache.installed_distributions_stamp() != before
