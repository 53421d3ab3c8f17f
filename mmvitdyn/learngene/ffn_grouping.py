"""Step 3 of Cluster-Learngene: which adjacent layers share one FFN."""
from typing import List, Optional, Sequence, Tuple

Groups = List[Tuple[int, ...]]


def group_ffns(num_centroids: Sequence[int],
               num_heads: int,
               enabled: bool = True,
               groups: Optional[Sequence[Sequence[int]]] = None) -> Groups:
    """Partition the layers into FFN groups (maximal runs of adjacent layers with equal
    centroid counts c_l < H_a); returns every layer once, groups in layer order.

    Args:
        num_centroids (Sequence[int]): c_l, head centroids of each layer.
        num_heads (int): H_a, heads per layer of the ancestry.
        enabled (bool): False: every layer keeps its FFN (the ablation). Defaults to True.
        groups (Sequence[Sequence[int]], optional): Explicit runs of adjacent layers, others alone.
    """
    num_layers = len(num_centroids)
    if groups is not None:
        return explicit_groups(groups, num_layers)
    if not enabled:
        return [(layer, ) for layer in range(num_layers)]
    partition: Groups = []
    for layer, count in enumerate(num_centroids):
        clustered = count < num_heads
        previous = partition[-1][-1] if partition else None
        if (clustered and previous is not None and num_centroids[previous] == count):
            partition[-1] = partition[-1] + (layer, )
        else:
            partition.append((layer, ))
    return partition


def explicit_groups(groups: Sequence[Sequence[int]], num_layers: int) -> Groups:
    """Check user-given groups and complete them with single layers."""
    owner = {}
    for group in groups:
        group = tuple(int(layer) for layer in group)
        if not group:
            raise ValueError('ffn groups: an empty group was given')
        if group != tuple(range(group[0], group[0] + len(group))):
            raise ValueError(f'ffn group {list(group)} is not a run of adjacent layers in order')
        for layer in group:
            if not 0 <= layer < num_layers:
                raise ValueError(f'ffn group {list(group)}: layer {layer} is out of range '
                                 f'(the ancestry has layers 0..{num_layers - 1})')
            if layer in owner:
                raise ValueError(
                    f'ffn groups {list(owner[layer])} and {list(group)} both hold layer {layer}')
            owner[layer] = group
    partition: Groups = []
    for layer in range(num_layers):
        group = owner.get(layer, (layer, ))
        if group[0] == layer:
            partition.append(group)
    return partition
