"""The Triton kernels: the tutorial's fused softmax as the chapter teaches it, and the project's tuned ones."""
