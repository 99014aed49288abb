"""Text in, records out: the producer grammars applied to an input's lines."""

from nforensics.parse.assemble import assemble, physical_lines

__all__ = ["assemble", "physical_lines"]
