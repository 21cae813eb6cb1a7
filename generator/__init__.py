"""gen: render version-pinned SGLang systemd services from manifests and inventories."""

import sys

__version__ = "0.1.0"

# Python's int() refuses a text of more than 4,300 decimal digits with a ValueError (its guard
# against a quadratic parse of unbounded text). gen turns digits the operator or a host wrote
# into numbers in many places (CPU lists, IPv4 parts, sizes, versions), and a 5,000-digit CPU
# number stopped `gen check` with an internal error. Every value gen reads is bounded at
# load.limits.MAX_SCALAR_CHARS (64 KiB; a host's reply and the facts of `gen host snapshot`
# are bounded before they are parsed), and the parse of that many digits takes about 40 ms:
# so the limit is that bound, and no admitted value can make int() raise where a range check
# would have said what is wrong (tests/test_attack_round4.py keeps the two equal).
INT_DIGITS_MOST = 64 * 1024
# (A Python before 3.10.7 has no such limit, and no functions for it.)
if hasattr(sys, "get_int_max_str_digits") and 0 < sys.get_int_max_str_digits() < INT_DIGITS_MOST:
    sys.set_int_max_str_digits(INT_DIGITS_MOST)
