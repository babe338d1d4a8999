"""The named formats against the standards' own readers, and the portable regex subset."""

from __future__ import annotations

import datetime as dt
import ipaddress
import itertools
import random
import re

import pytest

from checks.kinds.portable_regex import problem
from checks.kinds.value_formats import PATTERNS, code_source, codes


def full(name: str, text: str) -> bool:
    return re.fullmatch(PATTERNS[name], text) is not None


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_every_format_is_in_the_portable_subset(name: str) -> None:
    assert problem(PATTERNS[name]) is None
    assert "\\" not in PATTERNS[name]  # no engine's string escaping can change it


def test_iso_date_is_every_real_day_and_no_other() -> None:
    for year in (1, 1900, 1999, 2000, 2023, 2024, 2100, 2400, 9999):
        for month, day in itertools.product(range(14), range(33)):
            text = f"{year:04d}-{month:02d}-{day:02d}"
            try:
                dt.date(year, month, day)
                real = True
            except ValueError:
                real = False
            assert full("iso_date", text) is real, text
    assert not full("iso_date", "2024-1-01") and not full("iso_date", "20240101")


def _ipv6_candidates(rng: random.Random) -> list[str]:
    words = ["0", "1", "ff", "ABCD", "12345", "g", "", "1.2.3.4", "256.1.1.1", "01.2.3.4"]
    found = []
    for _ in range(4000):
        parts = [rng.choice(words) for _ in range(rng.randint(1, 10))]
        found.append(":".join(parts))
    return found


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def test_ipv6_agrees_with_the_standard_library() -> None:
    named = ["::", "::1", "1::", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8", "1::2:3:4:5:6:7",
             "2001:db8::ff00:42:8329", "::ffff:192.0.2.1", "1:2:3:4:5:6:1.2.3.4",
             "1::1.2.3.4", "1:2:3:4:5::1.2.3.4", "1:2:3:4:5:6::1.2.3.4", ":::", "1:::2",
             "1:2:3:4:5:6:7:8:9", "12345::", "::ffff:1.2.3.04"]  # fmt: skip
    for text in named + _ipv6_candidates(random.Random(7)):
        assert full("ipv6", text) is _is_ipv6(text), text


def test_ipv4_is_a_dotted_quad_without_leading_zeros() -> None:
    for text in ("0.0.0.0", "255.255.255.255", "192.168.0.1", "10.0.0.255"):
        assert full("ipv4", text), text
    for text in ("256.1.1.1", "1.2.3.04", "1.2.3", "1.2.3.4.5", "1..2.3", " 1.2.3.4", "a.b.c.d"):
        assert not full("ipv4", text), text


@pytest.mark.parametrize(
    ("name", "good", "bad"),
    [
        (
            "email",
            ["a@x.org", "first.last+tag@sub.example.co.uk", "o'neil@x.io"],
            ["a@x", "@x.org", "a@-x.org", "a@x..org", "a b@x.org", "zoë@x.org", "a@x.org "],
        ),
        (
            "uuid",
            ["123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000"],
            ["123e4567e89b12d3a456426614174000", "{123e4567-e89b-12d3-a456-426614174000}"],
        ),
        (
            "url",
            ["https://example.com", "http://localhost:8080/a?b=c#d", "HTTPS://x.org/"],
            ["ftp://x.org", "https://", "https://a b.com", "https://x.org/a b", "//x.org"],
        ),
        (
            "e164_phone",
            ["+14155550100", "+442071838750", "+123456789012345"],
            ["14155550100", "+0123", "+1234567890123456", "+1 415 555 0100", "+"],
        ),
        (
            "iso_datetime",
            [
                "2024-01-31T23:59:59Z",
                "2024-01-31 10:00",
                "2024-02-29t00:00:00,5-0530",
                "2024-01-31T10:00:00.123456+05:30",
                "2024-01-31T10:00+05",
            ],
            [
                "2024-01-31",
                "2024-01-31T24:00",
                "2024-01-31T10:60",
                "2023-02-29T00:00",
                "2024-01-31T10:00:00+5",
            ],
        ),
    ],
)
def test_format_examples(name: str, good: list[str], bad: list[str]) -> None:
    assert [g for g in good if not full(name, g)] == []
    assert [b for b in bad if full(name, b)] == []


def test_the_code_lists_come_from_pycountry() -> None:
    countries, currencies = codes("iso_country"), codes("iso_currency")
    assert (len(countries), len(currencies)) == (249, 178)
    assert {"US", "DE", "GB", "SS"} <= set(countries) and "XX" not in countries
    assert {"USD", "EUR", "XTS", "CHE"} <= set(currencies) and "EURO" not in currencies
    assert all(re.fullmatch(PATTERNS["iso_country"], c) for c in countries)
    assert all(re.fullmatch(PATTERNS["iso_currency"], c) for c in currencies)
    assert code_source().startswith("pycountry ")


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("[a-z", "is not a valid regular expression: unterminated character set at character 1"),
        ("a)", "is not a valid regular expression: unbalanced parenthesis at character 2"),
        ("", "must not be empty"),
        (r"\d+", r"uses \d at character 1, which not every engine reads alike: write [0-9] for \d"),
        (
            r"a\sb",
            r"uses \s at character 2, which not every engine reads alike: list the spaces, "
            r"e.g. [ ] for \s",
        ),
        (
            r"(a)\1",
            r"uses \1 at character 4, which not every engine reads alike: escape only "
            ". * + ? ( ) [ ] { } | ^ $ and the backslash",
        ),
        (
            "(?:ab)+",
            "uses a (?…) group at character 1: POSIX regular expressions (PostgreSQL, "
            "Redshift, Snowflake) have no non-capturing, lookaround, named or flag groups; write a "
            "plain group (…)",
        ),
        (
            "a(?=b)",
            "uses a (?…) group at character 2: POSIX regular expressions (PostgreSQL, "
            "Redshift, Snowflake) have no non-capturing, lookaround, named or flag groups; write a "
            "plain group (…)",
        ),
        (
            r"[\w.]+",
            "has a backslash inside [...] at character 2: POSIX reads it as itself, the "
            "other engines as an escape; put ] first, - first or last, ^ anywhere but first",
        ),
        (
            "[[:alpha:]]",
            "has a '[' inside [...] at character 2: Java reads a nested class, POSIX [:class:]",
        ),
        ("[a-z&&b]", "has '&&' inside [...] at character 5: a set operation in Java or Python"),
        (
            "a+?",
            "uses a lazy or possessive quantifier at character 3: POSIX regular expressions "
            "have neither",
        ),
        (
            "a++",
            "uses a lazy or possessive quantifier at character 3: POSIX regular expressions "
            "have neither",
        ),
        ("a{,3}", r"has a '{' at character 2 that is no bound {n}, {n,} or {n,m}: escape it as \{"),
        ("a{1,256}", "repeats more than 255 times at character 2: POSIX's limit (RE_DUP_MAX)"),
        ("a*{2}", "is not a valid regular expression: multiple repeat at character 3"),
        ("a|", "has an empty alternative at character 2: write (a)? for an optional a"),
        ("(|a)", "has an empty alternative at character 2: write (a)? for an optional a"),
        ("()", "has an empty group at character 1"),
        ("a}", r"has a '}' at character 2 that closes no bound: escape it as \}"),
    ],
)
def test_a_pattern_outside_the_portable_subset_is_refused(pattern: str, message: str) -> None:
    assert problem(pattern) == message


@pytest.mark.parametrize(
    "pattern",
    [
        r"[A-Z]{3}-[0-9]{4}",
        r"a\.b\*c\\",
        "[]a]",
        "[^]a-]",
        "(ab|cd)+e?",
        "^x$",
        "[a-z]{2,}",
        "[.][$][(]",
        "a{0,255}",
    ],
)
def test_patterns_every_engine_reads_alike_are_kept(pattern: str) -> None:
    assert problem(pattern) is None
