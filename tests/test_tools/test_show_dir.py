"""tools/test.py --show-dir draws every test image, as the stock test tools do."""
import glob
import os.path as osp

import pytest

from helpers.configs import DYT_ADE_CFG, DYT_DIGITS_CFG
from helpers.tools import run_tool


def drawn_images(root) -> list:
    return glob.glob(osp.join(root, '**', '*.png'), recursive=True)


def show_test_images(config, checkpoint, workspace, out, *extra) -> list:
    """Run tools/test.py with --show-dir on the first images, batches of 2; what it drew."""
    run_tool([
        'test.py', config, checkpoint, '--work-dir', out / 'work', '--show-dir', out / 'vis',
        *extra, '--cfg-options', 'test_dataloader.dataset.indices=12',
        'test_dataloader.batch_size=2'
    ], workspace)
    return drawn_images(out)


@pytest.mark.parametrize(
    'config, checkpoint, num_images',
    [
        (DYT_DIGITS_CFG, 'dyt_digits_checkpoint', 12),
        (DYT_ADE_CFG, 'dyt_ade_checkpoint', 4),  # the generated ADE set has 4
    ])
def test_show_dir_draws_every_image(config, checkpoint, num_images, request, data_workspace,
                                    tmp_path):
    drawn = show_test_images(config, request.getfixturevalue(checkpoint), data_workspace, tmp_path)
    assert len(drawn) == num_images, drawn


def test_show_interval_draws_every_nth_batch(dyt_digits_checkpoint, data_workspace, tmp_path):
    drawn = show_test_images(DYT_DIGITS_CFG, dyt_digits_checkpoint, data_workspace, tmp_path,
                             '--show-interval', '2')
    assert len(drawn) == 6  # batches 0, 2 and 4 of 6, two images each
