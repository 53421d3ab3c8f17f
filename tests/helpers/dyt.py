"""Setting DyT token dispatchers to known states in tests."""
import torch


def spread_gates(model, std=1.0, bias=0.0):
    """Dispatcher weights that give each image its own activation rate."""
    torch.manual_seed(1)
    for block in model.dyt_blocks():
        for dispatcher in block.dispatchers.values():
            torch.nn.init.normal_(dispatcher.gate.weight, std=std)
            torch.nn.init.constant_(dispatcher.gate.bias, bias)
