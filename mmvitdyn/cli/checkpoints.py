"""The tools' ``--trust-checkpoint [PATH ...]`` option (its value goes to
:func:`~mmvitdyn.checkpoint.trusted_names`)."""
from ..checkpoint import TRUST_FLAG

# Keyword arguments of ``ArgumentParser.add_argument(TRUST_FLAG, ...)``.
TRUST_OPTION = dict(
    nargs='*',
    metavar='PATH',
    help='fully unpickle these checkpoints (paths or URLs; without PATHs: the checkpoint '
    'arguments of this command) although they hold more than tensors and what an mmengine '
    'Runner checkpoint holds; this can run code from the files, so only for files whose '
    f'source you trust. Other checkpoints stay refused. Put it last, or use {TRUST_FLAG}=PATH')


def add_trust_option(parser) -> None:
    """Add ``--trust-checkpoint [PATH ...]`` to a tool's ``argparse`` ``parser``."""
    parser.add_argument(TRUST_FLAG, **TRUST_OPTION)
