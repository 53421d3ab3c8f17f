"""Command lines for the generators, built from their signatures.

Each keyword argument becomes an option (``max_per_class`` ->
``--max-per-class``) with the function's default, so the defaults live only
in the generator.
"""
import argparse
import inspect
import typing
from typing import Callable, List, Optional

from mmvitdyn.datasets.generators import GeneratedSet


def option_type(parameter: inspect.Parameter) -> type:
    """The value type of a keyword parameter: that of its default, or the
    ``X`` of an ``Optional[X]`` annotation when the default is None."""
    if parameter.default is not None:
        return type(parameter.default)
    return next(arg for arg in typing.get_args(parameter.annotation) if arg is not type(None))


def build_parser(generate: Callable[..., GeneratedSet]) -> argparse.ArgumentParser:
    """An argparse parser with one option per parameter of ``generate``."""
    parser = argparse.ArgumentParser(description=inspect.getdoc(generate).splitlines()[0])
    for name, parameter in inspect.signature(generate).parameters.items():
        flag = '--' + name.replace('_', '-')
        if parameter.default is False:
            parser.add_argument(flag, action='store_true')
        else:
            parser.add_argument(
                flag,
                type=option_type(parameter),
                default=parameter.default,
                help='default: %(default)s')
    return parser


def main(generate: Callable[..., GeneratedSet], argv: Optional[List[str]] = None) -> GeneratedSet:
    """Parse ``argv``, run ``generate`` and print what it wrote."""
    generated = generate(**vars(build_parser(generate).parse_args(argv)))
    print(generated.summary())
    return generated
