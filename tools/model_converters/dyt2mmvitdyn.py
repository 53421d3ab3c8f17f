"""Convert a checkpoint of the official DyT code (NUS-HPC-AI-Lab/Dynamic-Tuning) to mmvitdyn.

    python tools/model_converters/dyt2mmvitdyn.py SRC DST [--classifier] [--trust-checkpoint]

The adapter scale is not stored in the checkpoint: set the config's
``adapter_cfg.scale`` to the value it was trained with (the official code's ``--scale``).
With ``--classifier`` the result loads with ``load_from`` (a backbone
``init_cfg`` re-initialises adapters and dispatchers after loading).
"""
from _converter_cli import convert


def main(argv=None) -> str:
    return convert(('dyt', ), __doc__.splitlines()[0], argv)


if __name__ == '__main__':
    main()
