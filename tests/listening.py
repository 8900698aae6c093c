"""Which local addresses a TCP port listens on, read from Linux's /proc/net tables: the app
and the MCP server must listen on loopback only."""
from __future__ import annotations

import ipaddress
from pathlib import Path


def listen_addresses(port: int) -> set[str]:
    """Addresses a TCP socket on ``port`` listens on (Linux /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            local, state = row.split()[1], row.split()[3]
            addr, hexport = local.split(":")
            if state == "0A" and int(hexport, 16) == port:  # LISTEN
                raw = bytes.fromhex(addr)
                # the kernel prints each 32-bit word in host (little-endian) order
                raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                found.add(str(ipaddress.ip_address(raw)))
    return found
