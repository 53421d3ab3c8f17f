import numpy as np
import torch

from mmvitdyn.visualization.dispatch_maps import SkipView, plot_skip_map


def test_skip_map_panels_say_what_their_number_is(tmp_path):
    """Block 0 runs its MLP on 3 of 4 patches, block 1 on 1 of 4."""
    masks = [dict(mlp=torch.tensor([1., 1., 1., 0.])), dict(mlp=torch.tensor([0., 1., 0., 0.]))]
    view = SkipView(np.zeros((16, 16, 3), np.uint8), masks, (2, 2))
    fig = plot_skip_map([view], 8, 'digit', str(tmp_path / 'map.png'))
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ['input', 'block 0 mlp: 75% active', 'block 1 mlp: 25% active']
    assert (tmp_path / 'map.png').stat().st_size > 0
