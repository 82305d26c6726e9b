"""Facts about the machine a kernel runs on: the backend (GPU or Triton's interpreter), element types, the GPU's
figures, the hardware's occupancy rules, and compiling a kernel for a GPU to read what it uses."""
