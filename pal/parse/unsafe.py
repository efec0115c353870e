"""What a fast reading of an output.xml raises to hand the file to a slower, stricter one.

``pal.parse.build`` reads a file first with the byte filter and the tails read from their bytes,
then with the filter alone, then with the XML parser alone; these exceptions say which step
gave up. They live apart from the readers so that each reader can raise them without
importing the others.
"""

from __future__ import annotations


class FilterUnsafe(Exception):
    """The file has XML constructs the byte-level filter cannot skip safely."""


class TailUnread(FilterUnsafe):
    """A test's tail holds something ``pal.parse.tails`` leaves to the XML parser (or the file is
    not UTF-8): parse it again with the tails in the stream."""
