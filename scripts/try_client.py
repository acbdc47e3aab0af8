"""Drive forgelens with the official MCP Python SDK, as a new user's client would.

Needs: Python 3.10 or later and the SDK, `pip install mcp` (tried with mcp 1.30 and 2.3).
Usage: python3 scripts/try_client.py [PATH_TO_FORGELENS] [URI]
The server inherits FORGEJO_URL / FORGEJO_TOKEN from the environment.
"""

import asyncio
import os
import sys

try:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
except ImportError:
    sys.exit("try_client.py needs the MCP Python SDK: pip install mcp (1.x or 2.x)")


def field(obj, snake, camel):
    """A field the SDK's 2.x names in snake case and its 1.x in camel case."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


async def main() -> None:
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/forgelens"
    uri = sys.argv[2] if len(sys.argv) > 2 else "forgejo://instance"
    params = StdioServerParameters(command=binary, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            info = field(init, "server_info", "serverInfo")
            version = field(init, "protocol_version", "protocolVersion")
            print("server:", info.name, info.version, "protocol", version)
            templates = await session.list_resource_templates()
            print("templates:", len(field(templates, "resource_templates", "resourceTemplates")))
            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            more = " (next page: yes)" if field(tools, "next_cursor", "nextCursor") else ""
            print(f"tools: {len(names)} on the first page{more}, starting", ", ".join(names[:3]))
            result = await session.read_resource(uri)
            for block in result.contents:
                print(field(block, "mime_type", "mimeType"), block.text)


asyncio.run(main())
