from .dyt_encoder_decoder import DyTEncoderDecoder

__all__ = ['DyTEncoderDecoder']
