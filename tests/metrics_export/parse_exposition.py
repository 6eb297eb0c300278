#!/usr/bin/env python3
"""Independent check of a Prometheus text exposition (format 0.0.4).

Usage: parse_exposition.py FILE [HISTOGRAM=COUNT ...]

Parses FILE with prometheus_client's own parser (Debian
python3-prometheus-client), which raises on malformed lines, bad escapes or
bad values. For every histogram series it checks that the buckets are
cumulative (non-decreasing in le order), that le="+Inf" exists and equals
_count. For each HISTOGRAM=COUNT argument it checks that the family's
_count summed over its series is COUNT. Prints one line per family
("name type series") and exits 1 with the reason on the first failure.
"""
import math
import sys

from prometheus_client.parser import text_string_to_metric_families


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    if len(sys.argv) < 2:
        fail("usage: parse_exposition.py FILE [HISTOGRAM=COUNT ...]")
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    if not text.endswith("\n"):
        fail("the exposition does not end with a line feed")
    expected = {}
    for arg in sys.argv[2:]:
        name, _, count = arg.partition("=")
        expected[name] = int(count)

    totals = {}
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser's own error names the line
        fail("prometheus_client cannot parse it: %r" % (e,))
    for fam in families:
        series = {}
        for s in fam.samples:
            key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            series.setdefault(key, []).append(s)
        print("%s %s %d" % (fam.name, fam.type, len(series)))
        if fam.type != "histogram":
            continue
        total = 0
        for key, samples in series.items():
            buckets = [(float(s.labels["le"]), s.value)
                       for s in samples if s.name == fam.name + "_bucket"]
            counts = [s.value for s in samples if s.name == fam.name + "_count"]
            sums = [s.value for s in samples if s.name == fam.name + "_sum"]
            if len(counts) != 1 or len(sums) != 1:
                fail("%s%s: %d _count and %d _sum samples" % (fam.name, key, len(counts), len(sums)))
            buckets.sort()
            if not buckets or not math.isinf(buckets[-1][0]):
                fail("%s%s: no le=\"+Inf\" bucket" % (fam.name, key))
            for (_, a), (le, b) in zip(buckets, buckets[1:]):
                if b < a:
                    fail("%s%s: bucket le=%s has %s < %s (not cumulative)" % (fam.name, key, le, b, a))
            if buckets[-1][1] != counts[0]:
                fail("%s%s: +Inf bucket %s != _count %s" % (fam.name, key, buckets[-1][1], counts[0]))
            total += counts[0]
        totals[fam.name] = total
    for name, count in expected.items():
        if name not in totals:
            fail("no histogram family %s (have: %s)" % (name, ", ".join(sorted(totals))))
        if totals[name] != count:
            fail("%s: _count %s, expected %d" % (name, totals[name], count))
    print("OK")


if __name__ == "__main__":
    main()
