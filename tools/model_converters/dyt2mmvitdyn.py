"""Convert a checkpoint of the official DyT code (NUS-HPC-AI-Lab/Dynamic-Tuning) to mmvitdyn.

    python tools/model_converters/dyt2mmvitdyn.py SRC DST [--classifier]
        [--trust-checkpoint [PATH ...]]

The summary ends with the DyTViT settings the checkpoint needs: ``keep_layers``
(dispatchers from block k on), ``adapter_cfg.scale`` ('learnable' when the
checkpoint stores the scale; otherwise the value it was trained with, the
official code's ``--scale``) and ``adapter_cfg.layer_norm`` (the official key
``adapter_layer_norm_before`` serves 'in' and 'out' alike: set the one it was
trained with). Keys no DyTViT setting holds are refused by name.
With ``--classifier`` the result loads with ``load_from`` (a backbone
``init_cfg`` re-initialises adapters and dispatchers after loading).
"""
from _converter_cli import convert


def main(argv=None) -> str:
    return convert(('dyt', ), __doc__.splitlines()[0], argv)


if __name__ == '__main__':
    main()
