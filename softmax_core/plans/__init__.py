"""Launch plans: which kernel, block, warps and grid for a matrix on a GPU, and why (a code plus figures)."""
