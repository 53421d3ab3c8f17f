"""Random textures shared by the drawn-shape generators."""
import numpy as np
from PIL import Image


def smooth_noise(rng: np.random.Generator, height: int, width: int, cells: int) -> np.ndarray:
    """(height, width) float32 in [0, 1]: a random ``cells`` x ``cells`` grid, upsampled."""
    grid = rng.random((cells, cells), dtype=np.float32)
    image = Image.fromarray(grid).resize((width, height), Image.Resampling.BILINEAR)
    return np.asarray(image)


def noisy_fill(rng: np.random.Generator, height: int, width: int, colour: np.ndarray,
               contrast: float, cells: int, grain: float) -> np.ndarray:
    """(height, width, 3) float32 (unclipped): ``colour`` (3,) modulated by smooth
    noise of relative ``contrast`` plus Gaussian grain of std ``grain``."""
    shade = 1 + contrast * (2 * smooth_noise(rng, height, width, cells) - 1)
    fill = shade[..., None] * np.asarray(colour, dtype=np.float32)
    return fill + rng.normal(0, grain, (height, width, 3)).astype(np.float32)


def to_uint8(image: np.ndarray) -> np.ndarray:
    """Round and clip a float image to uint8."""
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)
