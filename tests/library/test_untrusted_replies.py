"""What the parent believes of a child and of a pasted file: result lines validated by one schema
(kernel_inspector/replies.py), and module-level names that cannot be rebound (the `jit = tl.static_print`
then `@jit` hole)."""
import json

import pytest

from kernel_inspector import gate, replies
from kernel_inspector.rules import SourceRefused
from softmax_core.hardware.compile import KernelResources

GOOD = {"kind": "compiled", "index": 0, "seconds": 0.5,
        "resources": {"n_regs": 32, "n_spills": 0, "shared_bytes": 0, "source": "cuobjdump", "target": "sm_80",
                      "refused": "", "toolchain": "ptxas 12", "asm": {"ptx": ".version 8"}}}


def test_a_well_formed_line_becomes_the_parents_own_objects():
    index, seconds, resources = replies.compile_reply(GOOD, range(1))
    assert (index, seconds) == (0, 0.5) and isinstance(resources, KernelResources) and resources.n_regs == 32


def _with(path: tuple, value):
    reply = json.loads(json.dumps(GOOD))
    node = reply
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return reply


@pytest.mark.parametrize("bad", [
    _with(("resources", "n_regs"), "32"),                 # a string for a number
    _with(("resources", "n_regs"), True),                 # a bool is not a count
    _with(("resources", "n_regs"), -1),
    _with(("resources", "shared_bytes"), 1 << 40),
    _with(("resources", "source"), "driver; rm -rf"),     # not one of the codes
    _with(("resources", "asm"), {"__class__": "x"}),      # a key the schema does not have
    _with(("resources", "extra"), 1),
    _with(("index",), 7),                                  # a variant that was never asked for
    _with(("kind",), "refused"),
    {"refused": {"code": "too_large"}},                    # the shape of a line from before the schema
    [GOOD], "compiled", None, 3,
    {"kind": "failed", "index": 0, "seconds": 1, "failure": {"hint": "none", "line": None, "message": ["x"]}},
])
def test_a_line_off_the_schema_is_dropped(bad):
    with pytest.raises(replies.BadReply):
        replies.compile_reply(bad, range(1))


def test_a_refusal_line_is_read_field_by_field():
    kind, refusal = replies.compile_reply({"kind": "refused", "refusal": {"code": "too_large", "line": 1}}, range(1))
    assert kind == "refused" and refusal.code == "too_large"
    with pytest.raises(replies.BadReply):
        replies.compile_reply({"kind": "refused", "refusal": {"code": "too_large", "line": 1, "x": 2}}, range(1))


HEAD = "import triton\nimport triton.language as tl\n"
BODY = "def k(x_ptr):\n    tl.store(x_ptr, 1.0)\n"


@pytest.mark.parametrize("text", [
    HEAD + "from triton import jit\njit = tl.static_print\n\n@jit\n" + BODY,      # an imported name rebound
    HEAD + "jit = tl.static_print\nfrom triton import jit\n\n@jit\n" + BODY,      # a constant then imported
    HEAD + "from triton import jit as j\nj = tl.static_print\n\n@j\n" + BODY,
    HEAD + "@triton.jit\n" + BODY + "k = 3\n",                                     # a kernel rebound
    HEAD + "tl = 3\n",                                                              # a module alias rebound
])
def test_a_module_level_name_cannot_be_rebound(text):
    with pytest.raises(SourceRefused) as refused:
        gate.check_source(text)
    assert refused.value.refusal.code in ("name_rebound", "module_as_value")


def test_constants_may_still_be_set_twice_and_plain_jit_still_passes():
    kf = gate.check_source(HEAD + "from triton import jit\nB = 1\nB = 2\n\n@jit\n" + BODY)
    assert kf.kernel().name == "k" and dict(kf.constants)["B"] == 2
