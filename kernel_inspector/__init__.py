"""Your own kernel: a pasted Triton kernel file checked (gate), its arguments stated (argspec), compiled for
catalog GPUs in a sandboxed child process (sandbox, worker), and read back as the figures the app shows for
softmax: registers, spills, shared memory, programs per SM, the limiter, the floors (inspect).

UI-free: codes and figures only; explorer_ui words them.
"""
