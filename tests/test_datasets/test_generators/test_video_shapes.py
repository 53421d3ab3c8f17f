"""The video shapes set: real .mp4 clips that mmaction2's decoding pipelines
(decord and PyAV) read, each clip showing the two shapes its class names."""
import numpy as np
import pytest
from mmaction.datasets import VideoDataset
from mmengine.registry import init_default_scope

from mmvitdyn.datasets.generators import (COCO_SHAPES_CLASSES, COCO_SHAPES_PALETTE,
                                          VIDEO_SHAPES_CLASSES, generate_video_shapes)

FRAMES, SIZE = 8, 32


@pytest.fixture(scope='module')
def clips(tmp_path_factory):
    root = tmp_path_factory.mktemp('generated') / 'video_shapes'
    generate_video_shapes(str(root), frame_size=SIZE, num_frames=FRAMES, num_train=6, num_val=3)
    return root


def shape_of(frame: np.ndarray) -> str:
    """The shape whose palette colour covers most pixels of an RGB frame."""
    distance = [np.abs(frame.astype(int) - colour).sum(-1) for colour in COCO_SHAPES_PALETTE]
    covered = [(d < 90).sum() for d in distance]
    return COCO_SHAPES_CLASSES[int(np.argmax(covered))]


@pytest.mark.parametrize('reader', ['Decord', 'PyAV'])
def test_mmaction2_s_pipeline_decodes_each_clip_to_the_shapes_of_its_class(clips, reader):
    init_default_scope('mmaction')
    pipeline = [
        dict(type=f'{reader}Init'),
        dict(type='SampleFrames', clip_len=FRAMES, frame_interval=1, num_clips=1, test_mode=True),
        dict(type=f'{reader}Decode'),
        dict(type='FormatShape', input_format='NCTHW'),
        dict(type='PackActionInputs'),
    ]
    dataset = VideoDataset(
        ann_file='train_list_videos.txt',
        data_root=str(clips),
        data_prefix=dict(video='videos'),
        pipeline=pipeline)
    assert len(dataset) == 6
    assert (clips / 'classes.txt').read_text().split() == list(VIDEO_SHAPES_CLASSES)
    for index in range(len(dataset)):
        item = dataset[index]
        assert tuple(item['inputs'].shape) == (1, 3, FRAMES, SIZE, SIZE)
        label = int(item['data_samples'].gt_label)
        assert label == index % 3
        frames = item['inputs'][0].permute(1, 2, 3, 0).numpy()  # (T, H, W, RGB)
        shown = {shape_of(frame) for frame in frames}
        assert shown == set(VIDEO_SHAPES_CLASSES[label].split('+'))


def test_odd_frame_sizes_are_refused(tmp_path):
    with pytest.raises(ValueError, match='frame_size must be even'):
        generate_video_shapes(str(tmp_path / 'odd'), frame_size=33)
