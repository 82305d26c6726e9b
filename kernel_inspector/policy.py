"""Whether this server may compile pasted code: the jail's live probe, the address students reach it on, and
the teacher's explicit choice.

- The jail works here (jail.probe): compiling is on, in the jail.
- It does not, and the server is reached only from this machine (127.0.0.1, ::1, localhost): compiling is on
  without the jail; the one who pastes is the one whose machine it is.
- It does not, and the server is reached from elsewhere (listening beyond loopback, or behind the class
  proxy, which sets PUBLIC_ADDRESS_ENV for its replicas): compiling is off unless the teacher started the
  server with ALLOW_UNSANDBOXED_ENV=1 (`softmax-explorer --allow-unsandboxed-compile`,
  `serve_class.py --allow-unsandboxed-compile`), knowing every student then runs code as the server's user.

Codes only: the page words them (explorer_ui/locales/your_kernel.*.toml).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from kernel_inspector import jail

ALLOW_UNSANDBOXED_ENV = "SOFTMAX_EXPLORER_ALLOW_UNSANDBOXED_COMPILE"
PUBLIC_ADDRESS_ENV = "SOFTMAX_EXPLORER_PUBLIC_ADDRESS"     # where students reach this process, if not its own
POLICY_CODES = ("sandboxed", "unsandboxed_local", "unsandboxed_allowed", "off_no_sandbox")


@dataclass(frozen=True)
class CompilePolicy:
    code: str                  # one of POLICY_CODES
    sandbox: str               # jail.SANDBOX_CODES: what a compile here runs in
    address: str               # the address students reach the server on ("" : every interface)

    @property
    def allowed(self) -> bool:
        return self.code != "off_no_sandbox"


def loopback_only(address: str | None) -> bool:
    """True where `address` is reachable from this machine alone ("" or None listens on every interface)."""
    host = (address or "").strip().strip("[]").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def unsandboxed_allowed() -> bool:
    return os.environ.get(ALLOW_UNSANDBOXED_ENV, "").strip() == "1"


def compile_policy(listen_address: str | None, sandbox: str | None = None) -> CompilePolicy:
    """The policy of a server listening on `listen_address` (PUBLIC_ADDRESS_ENV, where set, is what counts)."""
    sandbox = jail.probe() if sandbox is None else sandbox
    address = os.environ.get(PUBLIC_ADDRESS_ENV) or (listen_address or "")
    if sandbox == "bubblewrap":
        return CompilePolicy("sandboxed", sandbox, address)
    if loopback_only(address):
        return CompilePolicy("unsandboxed_local", sandbox, address)
    return CompilePolicy("unsandboxed_allowed" if unsandboxed_allowed() else "off_no_sandbox", sandbox, address)
