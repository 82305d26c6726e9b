"""From PyTorch tensors to a kernel launch: the public softmax functions and the PyTorch operators."""
