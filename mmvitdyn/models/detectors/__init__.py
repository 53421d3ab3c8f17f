from .dyt_mask_rcnn import DyTMaskRCNN

__all__ = ['DyTMaskRCNN']
