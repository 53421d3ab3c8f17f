"""DyT FLOPs of clips (B, C, T, H, W): every frame at its own active tokens, plus the
attentive pooling over the tokens of all frames."""
import pytest
import torch
from torch import nn

from mmvitdyn.analysis import DyTFlopCounter, calibrate_gates
from mmvitdyn.models.video import AttentivePooling, DyTVideoViT

WIDTH, HEADS, CLASSES, FRAMES, SIZE, PATCH = 32, 2, 5, 3, 16, 4
TOKENS = (SIZE // PATCH)**2 + 1  # patches and the class token, per frame


class ClipClassifier(nn.Module):
    """The public video model's layout: frames through the ViT, pooling, a linear head."""

    def __init__(self):
        super().__init__()
        self.backbone = DyTVideoViT(
            vit=dict(
                arch=dict(embed_dims=WIDTH, num_layers=2, num_heads=HEADS, feedforward_channels=64),
                img_size=SIZE,
                patch_size=PATCH,
                adapter_cfg=dict(bottleneck=8),
                dispatch='mlp'))
        self.pool = AttentivePooling(WIDTH, HEADS)
        self.fc = nn.Linear(WIDTH, CLASSES)

    def forward(self, clips):
        return self.fc(self.pool(self.backbone(clips)))


def pooling_and_head_flops(tokens: int) -> int:
    """Multiply-adds of the pooling and the head over ``tokens`` tokens (fvcore:
    a LayerNorm with affine weights costs 5 per element)."""
    norms = 5 * WIDTH * (1 + 2 * tokens)  # query; keys and values
    linears = WIDTH * WIDTH * (1 + 2 * tokens + 1)  # q of the query; k and v; proj
    attention = HEADS * tokens * 2 * (WIDTH // HEADS)  # one query: q k^T and weights v
    return norms + linears + attention + WIDTH * CLASSES


@pytest.fixture
def model():
    model = ClipClassifier().eval()
    for block in model.backbone.vit.dyt_blocks():  # gates that differ from token to token
        for dispatcher in block.dispatchers.values():
            nn.init.normal_(dispatcher.gate.weight, std=0.5)
    return model


def test_a_clip_costs_its_frames_as_images_plus_the_pooling(model):
    clips = torch.randn(2, 3, FRAMES, SIZE, SIZE)
    calibrate_gates(model, clips, 0.5)
    counter = DyTFlopCounter(model, clips[:1])
    with torch.no_grad():
        model(clips)
    per_clip = counter.from_last_forward()
    # The image path on the same ViT, frame by frame.
    vit, frames = model.backbone.vit, DyTVideoViT.clip_frames(clips)
    image_counter = DyTFlopCounter(vit, frames[:1])
    with torch.no_grad():
        vit(frames)
    per_frame = image_counter.from_last_forward()
    rates = (vit.dispatch_masks()[0]['mlp'] != 0).float().mean(1)
    assert len(set(rates.tolist())) > 1  # frames run different numbers of tokens
    expected = per_frame.reshape(2, FRAMES).sum(1) + pooling_and_head_flops(FRAMES * TOKENS)
    assert per_clip.tolist() == expected.tolist()
    assert counter.frames == FRAMES


def test_all_tokens_active_costs_frames_times_the_image(model):
    clips = torch.randn(1, 3, FRAMES, SIZE, SIZE)
    counter = DyTFlopCounter(model, clips)
    image = DyTFlopCounter(model.backbone.vit, DyTVideoViT.clip_frames(clips)[:1])
    assert counter.static_flops == (
        FRAMES * image.static_flops + pooling_and_head_flops(FRAMES * TOKENS))


def test_masks_of_a_partial_clip_are_refused(model):
    clips = torch.randn(1, 3, FRAMES, SIZE, SIZE)
    counter = DyTFlopCounter(model, clips)
    masks = [{'mlp': torch.ones(FRAMES + 1, TOKENS - 1)} for _ in range(2)]
    with pytest.raises(ValueError, match='not whole inputs of 3 frames'):
        counter(masks)
