"""The models the explorer's pages teach with: recorded traces of the kernels, program placement, memory
traffic, the chapter's side notes and the GPU comparison. `sc.softmax` needs none of them."""
