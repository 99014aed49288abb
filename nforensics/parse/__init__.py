"""Text in, records out: the producer grammars applied to an input's lines."""

from nforensics.parse.assemble import assemble

__all__ = ["assemble"]
