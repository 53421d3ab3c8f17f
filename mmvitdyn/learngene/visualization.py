"""A picture of the clustering: MAD per head per layer, coloured by cluster."""
from typing import Optional

from .artefact import Learngene


def plot_mad(learngene: Learngene, path: str, title: Optional[str] = None) -> None:
    """Save a PNG: one column of dots per layer, a dot per head at its MAD.

    Dots share a colour when their heads share a cluster (colours follow the
    priority order, so the biggest cluster of every layer has the first
    colour); the centroid chosen by ``select`` is ringed in black; heads in no
    cluster (DBSCAN noise) are grey crosses.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    mad = learngene.mad.numpy()
    num_layers, num_heads = mad.shape
    cmap = plt.get_cmap('tab10')
    fig, ax = plt.subplots(figsize=(max(6., 0.6 * num_layers + 2), 4.5))
    for layer, condensed in enumerate(learngene.layers):
        clustered = set()
        for rank, cluster in enumerate(condensed.clusters):
            heads = list(cluster.members)
            clustered.update(heads)
            ax.scatter([layer] * len(heads),
                       mad[layer, heads],
                       s=36,
                       color=cmap(rank % 10),
                       zorder=2)
            ax.scatter([layer], [mad[layer, cluster.representative]],
                       s=110,
                       facecolors='none',
                       edgecolors='black',
                       linewidths=1.2,
                       zorder=3)
        noise = [h for h in range(num_heads) if h not in clustered]
        if noise:
            ax.scatter([layer] * len(noise), mad[layer, noise], marker='x', color='grey', zorder=2)
    ax.set_xticks(range(num_layers))
    ax.set_xlabel('layer')
    ax.set_ylabel('mean attention distance (pixels)')
    settings = learngene.settings
    ax.set_title(title or 'MAD per head (colour: cluster, in priority order; ring: centroid)\n' +
                 ', '.join(f'{k}={settings[k]}'
                           for k in ('method', 'eps', 'k', 'num_images') if k in settings),
                 fontsize=9)
    ax.grid(alpha=.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
