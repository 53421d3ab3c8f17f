"""A picture of the clustering: MAD per head per layer, coloured by cluster."""
from typing import Optional, Union

from ..utils import save_figure_atomically
from .artefacts.swin import SwinLearngene
from .artefacts.vit import Learngene
from .file_format import format_settings


def plot_mad(learngene: Union[Learngene, SwinLearngene],
             path: str,
             title: Optional[str] = None) -> None:
    """Save a PNG: one column of dots per layer, a dot per head at its MAD.

    Dots share a colour when their heads share a cluster (colours follow the
    priority order, so the biggest cluster of every layer has the first
    colour); the centroid chosen by ``select`` is ringed in black; heads in no
    cluster (DBSCAN noise) are grey crosses.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    columns = learngene.mad_columns()
    cmap = plt.get_cmap('tab10')
    fig, ax = plt.subplots(figsize=(max(6., 0.6 * len(columns) + 2), 4.5))
    for layer, (_, row, clusters) in enumerate(columns):
        row = row.numpy()
        clustered = set()
        for rank, cluster in enumerate(clusters):
            heads = list(cluster.members)
            clustered.update(heads)
            ax.scatter([layer] * len(heads), row[heads], s=36, color=cmap(rank % 10), zorder=2)
            ax.scatter([layer], [row[cluster.representative]],
                       s=110,
                       facecolors='none',
                       edgecolors='black',
                       linewidths=1.2,
                       zorder=3)
        noise = [h for h in range(len(row)) if h not in clustered]
        if noise:
            ax.scatter([layer] * len(noise), row[noise], marker='x', color='grey', zorder=2)
    ax.set_xticks(range(len(columns)), [label for label, _, _ in columns])
    ax.set_xlabel('layer')
    ax.set_ylabel('mean attention distance (pixels)')
    settings = learngene.settings
    ax.set_title(
        title
        or 'MAD per head (colour: cluster, in priority order; ring: centroid)\n' + format_settings(
            {k: settings[k]
             for k in ('method', 'eps', 'k', 'num_images') if k in settings}),
        fontsize=9)
    ax.grid(alpha=.3)
    fig.tight_layout()
    save_figure_atomically(fig, path, dpi=120)
    plt.close(fig)
