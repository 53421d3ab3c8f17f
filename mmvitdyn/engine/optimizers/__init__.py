from .layer_decay_optim_wrapper_constructor import (LayerDecayOptimWrapperConstructor,
                                                    layer_decay_scale)

__all__ = ['LayerDecayOptimWrapperConstructor', 'layer_decay_scale']
