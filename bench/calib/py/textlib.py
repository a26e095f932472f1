"""A small text library (module `textlib`): in the calibration it stands for a third-party
package, an owner of its own (bench/calib/py/rules.toml), so the user share of pyload.py is
well below 100 %."""
import json
import re

WORD_RE = re.compile(r"[a-z]+")


def tokenize(text):
    return WORD_RE.findall(text.lower())


def word_counts(lines):
    counts = {}
    for line in lines:
        for w in tokenize(line):
            counts[w] = counts.get(w, 0) + 1
    return counts


def to_json(obj):
    return json.dumps(obj, sort_keys=True)
