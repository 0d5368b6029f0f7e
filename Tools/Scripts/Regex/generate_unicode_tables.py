#!/usr/bin/env python3
"""Generates Sources/PlugboardRegex/UnicodeTables+*.swift from the Unicode tables of Rust's regex-syntax crate.

Usage: python3 Tools/Scripts/Regex/generate_unicode_tables.py REGEX_SYNTAX_SRC_DIR
(the crate's `src` folder, e.g. `regex-syntax/src` of github.com/rust-lang/regex; the files are written into
Sources/PlugboardRegex whatever the current folder). The crate's `src/unicode_tables/*.rs` are themselves generated
from the Unicode Character Database by ucd-generate; regex-syntax 0.8.5 to 0.8.11 hold UCD 16.0.0 and give the same
files.

The tables are those of the engine Unleash uses (Unicode 16), so scripts, general categories, `\\w`/`\\d`/`\\s`, binary
properties, name aliases and simple case folding agree with it, whatever Unicode version the Swift standard library has.
"""

import os
import re
import sys
import textwrap

CHAR = r"'(\\u\{[0-9a-f]+\}|\\.|[^'])'"


def char(text):
    if text.startswith("\\u{"):
        return int(text[3:-1], 16)
    if text.startswith("\\"):
        return {"\\t": 9, "\\n": 10, "\\r": 13, "\\'": 39, "\\\\": 92, '\\"': 34, "\\0": 0}[text]
    return ord(text)


def wrap(text, indent="        "):
    return "\n".join(indent + line for line in textwrap.wrap(text, 120, break_long_words=False, break_on_hyphens=False))


def swift_string(name, doc, body):
    return f"    /// {doc}\n    static let {name} = \"\"\"\n{wrap(body)}\n        \"\"\"\n"


TABLE = r"pub const (\w+): &'static \[\(char, char\)\] =\s*&\[(.*?)\];"


def hex_ranges(table_body):
    """A table's `(first, last)` pairs as hexadecimal `first-last` or single code points."""
    out = []
    for a, b in re.findall(r"\(" + CHAR + ", " + CHAR + r"\)", table_body):
        lo, hi = char(a), char(b)
        out.append(f"{lo:x}" if lo == hi else f"{lo:x}-{hi:x}")
    return out


def ranges(text, skip=()):
    """`=Name first-last …` for every table of a ucd-generate file (but those in `skip`), by its `BY_NAME` name."""
    body = []
    for match in re.finditer(TABLE, text, re.S):
        name = re.search(r'\("(\w+)", ' + match.group(1) + r"\)", text).group(1)
        if name in skip:
            continue
        body.append("=" + name)
        body.extend(hex_ranges(match.group(2)))
    return " ".join(body)


def single(text, name):
    """`=Name first-last …` for the one table of a ucd-generate file without a `BY_NAME` list (the Perl classes)."""
    return " ".join(["=" + name] + hex_ranges(re.search(TABLE, text, re.S).group(2)))


# General categories that are unions of others: the Swift side composes them from the rest.
CATEGORY_UNIONS = {"Cased_Letter", "Letter", "Mark", "Number", "Other", "Punctuation", "Separator", "Symbol"}


def main():
    src = sys.argv[1].rstrip("/") + "/unicode_tables/"
    values = open(src + "property_values.rs").read()

    def aliases(prop):
        block = re.search(r'\(\s*"' + prop + r'",\s*&\[(.*?)\],\s*\)', values, re.S).group(1)
        return " ".join(f"{a}={c}" for a, c in re.findall(r'\("([^"]+)", "([^"]+)"\)', block))

    names = open(src + "property_names.rs").read()
    prop_names = " ".join(f"{a}={c}" for a, c in re.findall(r'\("([^"]+)", "([^"]+)"\)', names))
    folding = open(src + "case_folding_simple.rs").read()
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for key, others in re.findall(r"\(" + CHAR + r", &\[(.*?)\]\)", folding):
        for other in re.findall(CHAR, others):
            parent[find(char(key))] = find(char(other))
    orbits = {}
    for c in list(parent):
        orbits.setdefault(find(c), []).append(c)
    orbit_text = " ".join(",".join(f"{c:x}" for c in sorted(o)) for o in sorted(orbits.values()))
    def table(file):
        return open(src + file).read()

    perl = (("word", "Word"), ("decimal", "Digit"), ("space", "Space"))
    files = {
        "UnicodeTables+Scripts.swift": [
            ("scriptRanges", "Every script's ranges: `=Name` then hexadecimal `first-last` or single code points.", ranges(table("script.rs"))),
        ],
        "UnicodeTables+Extensions.swift": [
            ("scriptExtensionRanges", "Every script's extensions (`scx=`), as `scriptRanges`.", ranges(table("script_extension.rs"))),
            ("binaryPropertyRanges", "Every binary property the crate knows, as `scriptRanges`.", ranges(table("property_bool.rs"))),
        ],
        "UnicodeTables+Categories.swift": [
            (
                "generalCategoryRanges",
                "Every general category that is not a union of others, as `scriptRanges`.",
                ranges(table("general_category.rs"), skip=CATEGORY_UNIONS),
            ),
            (
                "perlClassRanges",
                "`\\w`, `\\d` and `\\s` with Unicode (`=Word`, `=Digit`, `=Space`), as `scriptRanges`.",
                " ".join(single(table(f"perl_{file}.rs"), name) for file, name in perl),
            ),
        ],
        "UnicodeTables+Names.swift": [
            ("generalCategoryNames", "Normalized general category aliases: `alias=Canonical_Name`.", aliases("General_Category")),
            ("scriptNames", "Normalized script aliases: `alias=Canonical_Name`.", aliases("Script")),
            ("propertyNames", "Normalized property name aliases: `alias=Canonical_Name`.", prop_names),
            ("caseOrbits", "Simple case folding: each group of code points (hexadecimal) that fold together.", orbit_text),
        ],
    }
    header = (
        "// Generated from the Unicode Character Database 16.0.0 by Tools/Scripts/Regex/generate_unicode_tables.py. Do not edit by hand.\n"
        "// The script reads the UCD as Rust's regex-syntax crate holds it (src/unicode_tables/*.rs, made by ucd-generate), so\n"
        "// the data is the data of Unleash's engine; run `python3 Tools/Scripts/Regex/generate_unicode_tables.py REGEX_SYNTAX_SRC_DIR`.\n"
        "// Unicode data © Unicode, Inc., Unicode License v3.\n\n"
    )
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Sources", "PlugboardRegex")
    for path, strings in files.items():
        with open(os.path.join(out_dir, path), "w") as out:
            out.write(header + "extension UnicodeTables {\n")
            out.write("\n".join(swift_string(name, doc, body) for name, doc, body in strings))
            out.write("}\n")

main()
